(preproc_def name: (identifier) @name value: (_)? @value) @macro
(preproc_function_def name: (identifier) @name parameters: (preproc_params) @params value: (_)? @value) @macro
