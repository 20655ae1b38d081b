; Decorated functions (the model keeps those decorated with triton.jit / jit / triton.autotune).
(decorated_definition
  definition: (function_definition name: (identifier) @name parameters: (parameters) @params)) @decorated

; Plain top-level functions (launchers).
(module (function_definition name: (identifier) @name parameters: (parameters) @params) @function)

; Launches: kernel[grid](args)
(call function: (subscript value: (identifier) @kernel) arguments: (argument_list) @args) @launch
