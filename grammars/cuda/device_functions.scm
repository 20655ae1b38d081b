; __device__ (and __host__ __device__) functions.
(function_definition "__device__" body: (compound_statement) @body) @function
