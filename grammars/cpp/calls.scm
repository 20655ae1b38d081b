; Calls to named functions (free, qualified, templated) and member calls (obj.f(), p->f()).
(call_expression
  function: [(identifier) (qualified_identifier) (template_function) (field_expression)] @callee
  arguments: (argument_list) @args) @call
