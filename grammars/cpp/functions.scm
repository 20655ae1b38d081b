; Every function definition; the model reads its execution-space qualifiers (__global__, __device__, __host__).
(function_definition
  declarator: (_) @declarator
  body: (compound_statement) @body) @function
