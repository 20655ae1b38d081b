(preproc_include path: (_) @path) @include
