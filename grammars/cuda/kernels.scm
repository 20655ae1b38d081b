; __global__ functions: the kernels.
(function_definition "__global__" body: (compound_statement) @body) @kernel
