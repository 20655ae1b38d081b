; Identifiers that are intrinsics without being calls.
((identifier) @id (#any-of? @id "warpSize"))
