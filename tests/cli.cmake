# Tests that drive the attnbench binary as a user would (label cli):
# bad inputs exit with status 2 and one line; a killed sweep resumes.
set(attnbench_bin $<TARGET_FILE:attnbench>)
set(cli_dir ${CMAKE_CURRENT_SOURCE_DIR}/cli)

file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_bad_sweep.json "{\"groups\": [ {\"seq\": [512,}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_bad_axis.json "[{\"sequence\": [512]}]")

set(bad_inputs
  "unknown_command|frobnicate"
  "no_command|"
  "unknown_flag|sweep --frobnicate"
  "unknown_variant|sweep --backend cpu --variant nope --dry-run"
  "unknown_tag|sweep --backend cpu --variant tag:frob --dry-run"
  "malformed_list|sweep --seq 512,,1024 --dry-run"
  "malformed_mask|sweep --mask none,local:5 --dry-run"
  "bad_dtype|sweep --dtype fp64 --dry-run"
  "h_not_divisible|sweep --backend cpu --heads 8 --kv-heads 3 --dry-run"
  "head_dim_range|sweep --backend cpu --head-dim 512 --dry-run"
  "tile_range|sweep --backend cpu --block 48x64 --dry-run"
  "nonpositive_size|sweep --backend cpu --seq 0 --dry-run"
  "negative_batch|sweep --backend cpu --batch -2 --dry-run"
  "bad_shard|sweep --backend cpu --shard 4/4 --dry-run"
  "bad_shard_text|sweep --backend cpu --shard half --dry-run"
  "bad_filter|sweep --backend cpu --filter ( --dry-run"
  "missing_sweep_file|sweep --sweep-file /nonexistent/sweep.json --dry-run"
  "bad_sweep_json|sweep --sweep-file ${CMAKE_CURRENT_BINARY_DIR}/cli_bad_sweep.json --dry-run"
  "bad_sweep_axis|sweep --sweep-file ${CMAKE_CURRENT_BINARY_DIR}/cli_bad_axis.json --dry-run"
  "missing_value|sweep --seq"
  "bad_backend|list --backend tpu"
  "run_missing_args|run --variant flash2"
  "merge_missing_file|merge --out /tmp/attnbench_merge.json /nonexistent/a.json"
  "unknown_gbench_flag|sweep --benchmark_frobnicate=1 --dry-run")
foreach(item ${bad_inputs})
  string(FIND "${item}" "|" bar)
  string(SUBSTRING "${item}" 0 ${bar} name)
  math(EXPR start "${bar} + 1")
  string(SUBSTRING "${item}" ${start} -1 args)
  separate_arguments(args UNIX_COMMAND "${args}")
  add_test(NAME cli_bad_input_${name} COMMAND bash ${cli_dir}/expect_bad_input.sh ${attnbench_bin} ${args})
  set_tests_properties(cli_bad_input_${name} PROPERTIES LABELS "cpu;cli" TIMEOUT 60)
endforeach()

add_test(NAME cli_list COMMAND ${attnbench_bin} list --backend cpu)
add_test(NAME cli_dry_run_quick COMMAND ${attnbench_bin} sweep --backend cpu --preset quick --dry-run)
add_test(NAME cli_kill_and_resume
         COMMAND bash ${cli_dir}/kill_resume.sh ${attnbench_bin} ${CMAKE_SOURCE_DIR}/scripts/resume_sweep.sh
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_kill_resume)
set_tests_properties(cli_list cli_dry_run_quick cli_kill_and_resume PROPERTIES LABELS "cpu;cli" TIMEOUT 300)

# The presets list every CUDA row without a device (a dry run opens no backend).
if(ATTNBENCH_WITH_CUDA)
  foreach(preset quick decode)
    add_test(NAME cli_cuda_dry_run_${preset}
             COMMAND ${attnbench_bin} sweep --preset ${preset} --backend cuda --dry-run)
    set_tests_properties(cli_cuda_dry_run_${preset} PROPERTIES LABELS "cpu;cli" TIMEOUT 60)
  endforeach()
  set_tests_properties(cli_cuda_dry_run_quick PROPERTIES PASS_REGULAR_EXPRESSION
    "flash2/cuda/bf16/[^\n]* run\n.*sparse/cuda/[^\n]* run\n.*flash2_gqa_packed/cuda/[^\n]* run")
  set_tests_properties(cli_cuda_dry_run_decode PROPERTIES PASS_REGULAR_EXPRESSION
    "flash2_splitkv/cuda/[^\n]*Nkv:131072[^\n]* run")
endif()
