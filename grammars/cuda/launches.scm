; Triple-chevron launches: kernel<<<grid, block, shmem, stream>>>(args)
(call_expression
  function: (_) @kernel
  (kernel_call_syntax) @config
  arguments: (argument_list) @args) @launch

; Launch APIs taking the kernel as the first argument.
(call_expression
  function: (identifier) @api
  arguments: (argument_list) @args
  (#any-of? @api "hipLaunchKernelGGL" "cudaLaunchKernel" "cudaLaunchCooperativeKernel" "hipLaunchKernel" "hipLaunchCooperativeKernel")) @api_launch
