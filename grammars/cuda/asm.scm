; Inline assembly (inline PTX in CUDA sources).
(gnu_asm_expression) @asm
