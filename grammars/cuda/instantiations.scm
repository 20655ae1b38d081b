; Explicit template instantiations: `template void launch<float>(...);` (host ones are cut from the device slice).
(template_instantiation declarator: (_) @declarator) @instantiation
