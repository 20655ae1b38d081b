// xlate shim: NVRTC provides these functions as builtins; nothing to include.
