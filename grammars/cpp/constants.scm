; File-scope integral constants: `const int TILE = 32;`, `constexpr int N = 4;`, enumerators.
(translation_unit
  (declaration
    (type_qualifier) @qualifier
    declarator: (init_declarator declarator: (identifier) @name value: (_) @value)))
(enumerator name: (identifier) @name value: (_) @value)
