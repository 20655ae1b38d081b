"""Build-file translation for --to hip (xlate/migrate/buildfiles.py): Makefile and CMake inputs written here, with
the exact lines expected."""

from __future__ import annotations

from xlate.migrate.buildfiles import BuildContext, translate

RENAMES = {"main.cu": "main.hip", "kernels/util.cuh": "kernels/util.hip.h", "host.cpp": "host.cpp",
           "already.cu": "already.cu"}
SUFFIXES = {".cu": ".hip", ".cuh": ".hip.h"}


def ctx(**kw) -> BuildContext:
    return BuildContext(kw.pop("folder", ""), RENAMES, kw.pop("suffixes", SUFFIXES), kw.pop("gfx", "gfx90a"), **kw)


def lines(text: str, rel: str = "Makefile", **kw) -> list[str]:
    return translate(text, rel, ctx(**kw)).text.split("\n")


def test_compiler_architecture_and_flags():
    out = lines("NVCC ?= /usr/local/cuda-12.2/bin/nvcc\n"
                "CUDA_PATH ?= /usr/local/cuda\n"
                "GENCODE = -gencode arch=compute_70,code=sm_70 -gencode=arch=compute_80,code=\\\"sm_80,compute_80\\\"\n"
                "FLAGS = -O3 --use_fast_math -Xcompiler -fopenmp,-O3 -Xptxas -v -lineinfo --expt-relaxed-constexpr -rdc=true\n"
                "LIBS = -L$(CUDA_PATH)/lib64 -lcudart -lcublas -lcusparse -lm\n"
                "CC=nvcc\n", gfx="gfx942")
    assert out[:6] == ["NVCC ?= hipcc", "CUDA_PATH ?= /opt/rocm", "GENCODE = --offload-arch=gfx942",
                       "FLAGS = -O3 -ffast-math -fopenmp -O3 -fgpu-rdc",
                       "LIBS = -L$(CUDA_PATH)/lib -lamdhip64 -lhipblas -lhipsparse -lm", "CC=hipcc"]
    # --roc: the roc* libraries
    assert lines("LIBS = -lcublas -lcusparse -lcurand\n", roc=True)[0] == "LIBS = -lrocblas -lrocsparse -lrocrand"


def test_arch_variables_keep_their_names_and_get_the_amd_target():
    out = lines("ARCH = sm_60\nSM := 80\nCFLAGS = -arch=$(ARCH)\nX = -arch sm_$(SM)\nY = --gpu-architecture=compute_75\n")
    assert out[:5] == ["ARCH = gfx90a", "SM := 80", "CFLAGS = --offload-arch=$(ARCH)", "X = --offload-arch=gfx90a",
                       "Y = --offload-arch=gfx90a"]


def test_continuations_and_dropped_flags_keep_the_layout():
    out = translate("CFLAGS := -std=c++17 -Xcompiler -Wall -arch=$(ARCH)\\\n  -Xcompiler \\\n  -fopenmp -lineinfo\n"
                    "ARCH = sm_70\n", "Makefile", ctx()).text
    assert out == "CFLAGS := -std=c++17 -Wall --offload-arch=$(ARCH)\\\n  -fopenmp\nARCH = gfx90a\n"


def test_file_names_and_suffix_patterns_follow_the_migration():
    out = lines("SRC = main.cu host.cpp already.cu kernels/util.cuh\nOBJ = $(SRC:.cu=.o)\nALL = $(wildcard src/*.cu)\n"
                "%.o: %.cu kernels/util.cuh\n.cu.o:\n\tnvcc -x cu -c $<\n# main.cu stays in comments\n")
    assert out[:7] == ["SRC = main.hip host.cpp already.cu kernels/util.hip.h", "OBJ = $(SRC:.hip=.o)",
                       "ALL = $(wildcard src/*.hip)", "%.o: %.hip kernels/util.hip.h", ".hip.o:",
                       "\thipcc --offload-arch=gfx90a -x hip -c $<", "# main.cu stays in comments"]
    # --keep-names: no name changes at all
    assert lines("SRC = main.cu\n%.o: %.cu\n", suffixes={})[:2] == ["SRC = main.cu", "%.o: %.cu"]


def test_c_files_compiled_by_nvcc_are_compiled_as_hip_and_every_compile_names_a_target():
    out = lines("CC = nvcc\nCFLAGS = -std=c++17 -arch=$(ARCH)\n"
                "%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n"
                "util.o: util/util.c\n\t$(CC) -O2 util/util.c -c -o $@\n"
                "k.o: k.cu\n\t$(CC) $(CFLAGS) -c k.cu\n"
                "app: k.o util.o\n\t$(CC) k.o util.o -o app\n"
                "other.o: other.c\n\tgcc -c other.c\n")
    assert out[3] == "\t$(CC) -x hip $(CFLAGS) -c $< -o $@"
    assert out[5] == "\t$(CC) --offload-arch=gfx90a -x hip -O2 util/util.c -c -o $@"
    assert out[7] == "\t$(CC) $(CFLAGS) -c k.hip"  # CFLAGS names the target
    assert out[9] == "\t$(CC) k.o util.o -o app"  # a link
    assert out[11] == "\tgcc -c other.c"  # not the CUDA compiler


def test_what_no_rule_translates_is_listed_with_a_suggestion():
    t = translate("LIBS = -lcufoo\nprof:\n\tnvprof ./app\n\tcuobjdump -sass app\nOK = -O2\n", "Makefile", ctx())
    assert [(m.line, m.text) for m in t.manual] == [(1, "LIBS = -lcufoo"), (3, "nvprof ./app"), (4, "cuobjdump -sass app")]
    assert "rocprof" in t.manual[1].suggestion
    assert t.changes == []  # nothing it could translate: the lines stay as they are


def test_cmake_language_targets_architectures_and_flags():
    t = translate("cmake_minimum_required(VERSION 3.18)\n"
                  "project(demo LANGUAGES CXX CUDA)  # a CUDA project\n"
                  "find_package(CUDAToolkit REQUIRED)\n"
                  "set(CMAKE_CUDA_STANDARD 17)\n"
                  "set(CMAKE_CUDA_ARCHITECTURES 70 80)\n"
                  'set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} --use_fast_math -arch=sm_70")\n'
                  "add_executable(demo main.cu host.cpp kernels/util.cuh)\n"
                  "set_source_files_properties(host.cpp PROPERTIES LANGUAGE CUDA)\n"
                  'set_target_properties(demo PROPERTIES CUDA_ARCHITECTURES "70;80" CUDA_SEPARABLE_COMPILATION ON)\n'
                  "target_compile_options(demo PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math>)\n"
                  "target_link_libraries(demo PRIVATE CUDA::cudart CUDA::cublas)\n"
                  "file(GLOB SRC ${CMAKE_CURRENT_SOURCE_DIR}/*.cu)\n", "CMakeLists.txt", ctx())
    assert t.text.split("\n") == [
        "cmake_minimum_required(VERSION 3.21)",
        "project(demo LANGUAGES CXX HIP)  # a CUDA project",
        "find_package(hip REQUIRED)",
        "find_package(hipblas REQUIRED)",
        "set(CMAKE_HIP_STANDARD 17)",
        "set(CMAKE_HIP_ARCHITECTURES gfx90a)",
        'set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} -ffast-math --offload-arch=gfx90a")',
        "add_executable(demo main.hip host.cpp kernels/util.hip.h)",
        "set_source_files_properties(host.cpp PROPERTIES LANGUAGE HIP)",
        "set_target_properties(demo PROPERTIES HIP_ARCHITECTURES gfx90a CUDA_SEPARABLE_COMPILATION ON)",
        "target_compile_options(demo PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-ffast-math>)",
        "target_link_libraries(demo PRIVATE hip::host roc::hipblas)",
        "file(GLOB SRC ${CMAKE_CURRENT_SOURCE_DIR}/*.hip)",
        ""]
    # Changes are listed by line of the source; the find_package lines ride on the line they replace.
    assert [c.line for c in t.changes] == list(range(1, 13))
    assert t.changes[2].new == "find_package(hip REQUIRED)\nfind_package(hipblas REQUIRED)"
    assert [(m.line, "separable" in m.suggestion) for m in t.manual] == [(9, True)]


def test_cmake_without_find_package_and_with_kept_names():
    out = translate("project(x CUDA)\nadd_executable(x a.cu)\ntarget_link_libraries(x CUDA::cusparse)\n",
                    "CMakeLists.txt", ctx(suffixes={})).text.split("\n")
    assert out[:5] == ["project(x HIP)", "find_package(hip REQUIRED)", "find_package(hipsparse REQUIRED)",
                       "add_executable(x a.cu)", "target_link_libraries(x roc::hipsparse)"]
    # .cu sources are HIP sources: CMake is told so
    assert "set_source_files_properties(${XLATE_HIP_SOURCES} PROPERTIES LANGUAGE HIP)" in out
