"""The AscendC static checker on hand-written AscendC: a sample transcribed from a public add_custom example
passes; planted violations are caught with their code and file:line:col."""

from __future__ import annotations

import pytest
from xlate.backends.ascendc_check import check_ascendc, what_was_checked

from xlate.errors import InputError

# Transcribed from the public Ascend C kernel-launch sample add_custom.cpp (Ascend/samples,
# operator/ascendc/0_introduction/3_add_kernellaunch/AddKernelInvocationNeo), half precision, 8 cores.
ADD_CUSTOM = r'''/**
 * add_custom.cpp, transcribed from the public Ascend C kernel-launch sample
 * (Ascend/samples operator/ascendc/0_introduction/3_add_kernellaunch/AddKernelInvocationNeo).
 */
#include "kernel_operator.h"

constexpr int32_t TOTAL_LENGTH = 8 * 2048;                            // total length of data
constexpr int32_t USE_CORE_NUM = 8;                                   // num of core used
constexpr int32_t BLOCK_LENGTH = TOTAL_LENGTH / USE_CORE_NUM;         // length computed of each core
constexpr int32_t TILE_NUM = 8;                                       // split data into 8 tiles for each core
constexpr int32_t BUFFER_NUM = 2;                                     // tensor num for each queue
constexpr int32_t TILE_LENGTH = BLOCK_LENGTH / TILE_NUM / BUFFER_NUM; // separate to 2 parts, due to double buffer

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z)
    {
        xGm.SetGlobalBuffer((__gm__ half *)x + BLOCK_LENGTH * AscendC::GetBlockIdx(), BLOCK_LENGTH);
        yGm.SetGlobalBuffer((__gm__ half *)y + BLOCK_LENGTH * AscendC::GetBlockIdx(), BLOCK_LENGTH);
        zGm.SetGlobalBuffer((__gm__ half *)z + BLOCK_LENGTH * AscendC::GetBlockIdx(), BLOCK_LENGTH);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE_LENGTH * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        int32_t loopCount = TILE_NUM * BUFFER_NUM;
        for (int32_t i = 0; i < loopCount; i++) {
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t progress)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], TILE_LENGTH);
        AscendC::DataCopy(yLocal, yGm[progress * TILE_LENGTH], TILE_LENGTH);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(int32_t progress)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(int32_t progress)
    {
        AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        AscendC::DataCopy(zGm[progress * TILE_LENGTH], zLocal, TILE_LENGTH);
        outQueueZ.FreeTensor(zLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<half> yGm;
    AscendC::GlobalTensor<half> zGm;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    KernelAdd op;
    op.Init(x, y, z);
    op.Process();
}

#ifndef ASCENDC_CPU_DEBUG
void add_custom_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z)
{
    add_custom<<<blockDim, nullptr, stream>>>(x, y, z);
}
#endif
'''


def planted(old: str, new: str, text: str = ADD_CUSTOM) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def errors(text: str, soc: str = "ascend910b") -> list:
    return [d for d in check_ascendc(text, "add_custom.cpp", soc) if d.severity == "error"]


def codes(text: str, soc: str = "ascend910b", severity: tuple[str, ...] = ("error", "warning")) -> list[str]:
    return [d.code for d in check_ascendc(text, "add_custom.cpp", soc) if d.severity in severity]


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_public_add_custom_sample_passes():
    diags = check_ascendc(ADD_CUSTOM, "add_custom.cpp", "ascend910b")
    assert [d.format() for d in diags if d.severity != "note"] == []
    checked = what_was_checked(diags)
    assert [c.split(":")[0] for c in checked] == ["entry point", "queue pairing", "UB budget", "32-byte copies",
                                                 "repeat limits", "block index"]
    assert "UB budget: Ascend 910B: KernelAdd 1536/196608 B" in checked  # 3 queues x 2 x 128 half


def test_soc_names_resolve_through_the_arch_specs():
    for soc in ("Ascend910B2", "dav-c220", "ascend310p", "Ascend310P3"):
        assert not errors(ADD_CUSTOM, soc)
    with pytest.raises(InputError):
        check_ascendc(ADD_CUSTOM, "k.cpp", "no-such-soc")
    with pytest.raises(InputError):
        check_ascendc(ADD_CUSTOM, "k.cpp", "mi250x")  # an arch spec, but not an Ascend one


def test_misaligned_copy():
    text = planted("AscendC::DataCopy(yLocal, yGm[progress * TILE_LENGTH], TILE_LENGTH);",
                   "AscendC::DataCopy(yLocal, yGm[progress * TILE_LENGTH], TILE_LENGTH - 1);")
    (e,) = errors(text)
    assert e.code == "XL3030" and "127 x half = 254 bytes" in e.message
    assert (e.path, e.line, e.col) == ("add_custom.cpp", line_of(text, "AscendC::DataCopy(yLocal"), 9)


def test_ub_overflow_depends_on_the_soc():
    # tiles of 20480 half: 3 queues x 2 buffers x 40 KiB = 240 KiB -- more than 910B's 192 KiB, less than 310P's 256 KiB
    text = planted("constexpr int32_t TOTAL_LENGTH = 8 * 2048;", "constexpr int32_t TOTAL_LENGTH = 8 * 2048 * 160;")
    (e,) = errors(text, "ascend910b")
    assert e.code == "XL3020" and "245760 bytes" in e.message and "196608" in e.message
    assert e.line == line_of(text, "pipe.InitBuffer(inQueueX")
    assert not errors(text, "ascend310p")


def test_missing_deque():
    text = planted("        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();\n", "")
    (e,) = errors(text)
    assert e.code == "XL3011" and "inQueueX" in e.message and "missing DeQue" in e.message
    assert e.line == line_of(text, "inQueueX.EnQue(xLocal);")


def test_missing_free_tensor():
    text = planted("        outQueueZ.FreeTensor(zLocal);\n", "")
    (e,) = errors(text)
    assert e.code == "XL3010" and "outQueueZ" in e.message and "AllocTensor without any FreeTensor" in e.message
    # and, per function, the DeQue'd tensor goes nowhere (a warning: tensors may live in members)
    (w,) = [d for d in check_ascendc(text, "add_custom.cpp", "ascend910b") if d.severity == "warning"]
    assert w.code == "XL3011" and "'zLocal'" in w.message


def test_queue_without_init_buffer():
    text = planted("        pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(half));\n", "")
    assert codes(text) == ["XL3012"]


def test_repeat_limit_of_level0_instructions():
    text = planted("AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);",
                   "AscendC::Add(zLocal, xLocal, yLocal, 128, 300, {1, 1, 1, 8, 8, 8});")
    (e,) = errors(text)
    assert e.code == "XL3040" and "300" in e.message and "255" in e.message
    ok = planted("AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);",
                 "AscendC::Add(zLocal, xLocal, yLocal, 128, 1, {1, 1, 1, 8, 8, 8});")
    assert not errors(ok)


def test_block_index_missing_from_the_split():
    text = ADD_CUSTOM.replace(" + BLOCK_LENGTH * AscendC::GetBlockIdx()", "")
    assert codes(text) == ["XL3050"]
    # called, but not used for the split
    text2 = planted("        pipe.InitBuffer(inQueueX,", "        int32_t unused = AscendC::GetBlockIdx();\n        pipe.InitBuffer(inQueueX,", text)
    assert codes(text2) == ["XL3051"]


def test_block_index_flowing_through_members_and_calls_counts():
    text = ADD_CUSTOM.replace(" + BLOCK_LENGTH * AscendC::GetBlockIdx()", " + this->base")
    text = planted("        pipe.InitBuffer(inQueueX,", "        this->base = BLOCK_LENGTH * AscendC::GetBlockIdx();\n"
                   "        pipe.InitBuffer(inQueueX,", text)
    text = planted("    AscendC::GlobalTensor<half> zGm;", "    AscendC::GlobalTensor<half> zGm;\n    int32_t base;", text)
    assert codes(text) == []


def test_datacopypad_on_a_soc_without_it():
    text = planted("AscendC::DataCopy(zGm[progress * TILE_LENGTH], zLocal, TILE_LENGTH);",
                   "AscendC::DataCopyExtParams p{1, TILE_LENGTH * sizeof(half), 0, 0, 0};\n"
                   "        AscendC::DataCopyPad(zGm[progress * TILE_LENGTH], zLocal, p);")
    assert codes(text, "ascend910b") == []
    assert codes(text, "ascend310p") == ["XL3031"]


def test_datacopy_params_out_of_range():
    text = planted("AscendC::DataCopy(zGm[progress * TILE_LENGTH], zLocal, TILE_LENGTH);",
                   "AscendC::DataCopyExtParams p{5000, 70000, 0, 0, 0};\n"
                   "        AscendC::DataCopyPad(zGm[progress * TILE_LENGTH], zLocal, p);")
    found = errors(text)
    assert [d.code for d in found] == ["XL3032", "XL3032"]
    assert "blockCount = 5000" in found[0].message and "blockLen = 70000" in found[1].message


def test_entry_point_form():
    text = planted('extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)',
                   'extern "C" __global__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)')
    assert codes(text) == ["XL3002"]
    text = planted('void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)\n{', 'void add_custom(GM_ADDR x, GM_ADDR y, float* z)\n{')
    assert codes(text) == ["XL3002"]
    text = planted('extern "C" __global__ __aicore__ void add_custom', '__global__ __aicore__ void add_custom')
    assert codes(text) == ["XL3003"]  # a warning: the symbol is mangled
    text = planted('#include "kernel_operator.h"\n', "")
    assert codes(text) == ["XL3004"]
    text = ADD_CUSTOM.replace("__global__", "")
    assert "XL3002" in codes(text)


def test_scalar_read_after_vector_instruction_needs_a_sync():
    read = "        half first = zLocal.GetValue(0);\n"
    text = planted("        outQueueZ.EnQue<half>(zLocal);", read + "        outQueueZ.EnQue<half>(zLocal);")
    (w,) = [d for d in check_ascendc(text, "k.cpp", "ascend910b") if d.severity == "warning"]
    assert w.code == "XL3060" and "zLocal" in w.message and "Add" in w.message
    synced = planted("        outQueueZ.EnQue<half>(zLocal);",
                     "        AscendC::TEventID e = GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S);\n"
                     "        AscendC::SetFlag<AscendC::HardEvent::V_S>(e);\n"
                     "        AscendC::WaitFlag<AscendC::HardEvent::V_S>(e);\n" + read +
                     "        outQueueZ.EnQue<half>(zLocal);")
    assert codes(synced) == []


def test_syntax_errors_stop_the_checks():
    text = planted("op.Process();", "op.Process(;")
    found = check_ascendc(text, "k.cpp", "ascend910b")
    assert found and all(d.code == "XL3001" for d in found)


def test_queue_parameters_of_helpers_are_not_queues_of_their_own():
    helper = ("    __aicore__ inline void Drain(AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM>& q)\n"
              "    {\n        AscendC::LocalTensor<half> t = q.DeQue<half>();\n        q.FreeTensor(t);\n    }\n")
    text = planted("private:\n    AscendC::TPipe pipe;", helper + "private:\n    AscendC::TPipe pipe;")
    assert codes(text) == []


def test_vector_api_qualifier_and_chevron_launch_parse():
    text = ADD_CUSTOM.replace('extern "C" __global__ __aicore__', 'extern "C" __global__ __vector__')
    assert codes(text) == []
