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
  "mask_bad_mask|mask --mask random:0,1 --nq 8 --nkv 8 --out /tmp/attnbench_mask.npy"
  "mask_missing_out|mask --mask causal --nq 8 --nkv 8"
  "unknown_gbench_flag|sweep --benchmark_frobnicate=1 --dry-run")
foreach(item ${bad_inputs})
  string(FIND "${item}" "|" bar)
  string(SUBSTRING "${item}" 0 ${bar} name)
  math(EXPR start "${bar} + 1")
  string(SUBSTRING "${item}" ${start} -1 args)
  separate_arguments(args UNIX_COMMAND "${args}")
  add_test(NAME cli_bad_input_${name} COMMAND bash ${cli_dir}/expect_bad_input.sh ${attnbench_bin} ${args})
  set_tests_properties(cli_bad_input_${name} PROPERTIES LABELS "nogpu;cli" TIMEOUT 60)
endforeach()

# Bad input, each a one-line error: "name|the text the one line must contain|args". Inputs are written here.
set(bad_dir ${CMAKE_CURRENT_BINARY_DIR}/cli_bad)
file(MAKE_DIRECTORY ${bad_dir} ${bad_dir}/a_directory)
string(REPEAT "[" 1000000 deep_open)
string(REPEAT "]" 1000000 deep_close)
file(WRITE ${bad_dir}/deep.json "${deep_open}${deep_close}")
file(WRITE ${bad_dir}/deep_context.json "{\"context\": ${deep_open}${deep_close}, \"benchmarks\": []}")
file(WRITE ${bad_dir}/not_json.json "{\"context\": {}, \"benchmarks\": [")
file(WRITE ${bad_dir}/bench_object.json "{\"context\": {}, \"benchmarks\": {}}")
file(WRITE ${bad_dir}/context_list.json "{\"context\": [], \"benchmarks\": []}")
file(WRITE ${bad_dir}/context_shard.json "{\"context\": {\"shard\": 3}, \"benchmarks\": []}")
file(WRITE ${bad_dir}/name_only.json "{\"context\": {}, \"benchmarks\": [{\"name\": \"x\"}]}")
file(WRITE ${bad_dir}/entry_number.json "{\"context\": {}, \"benchmarks\": [7]}")
set(ok_entry "\"variant\":\"t\",\"backend\":\"cpu\",\"dtype\":\"fp32\",\"mask\":\"none\",\"group\":\"g\",\"error_message\":\"\",\"B\":1,\"H\":1,\"Hkv\":1,\"Nq\":1,\"Nkv\":1,\"d\":1,\"Br\":1,\"Bc\":1,\"checked_rows\":0,\"batch\":1,\"real_time\":0,\"cpu_time\":0,\"iterations\":0,\"repetitions\":0,\"tolerance\":0.001,\"err_ok\":null,\"flops\":null,\"flops_executed\":null,\"bytes\":null,\"bytes_min\":null,\"bytes_counted\":null,\"intensity\":null,\"time_ms_min\":null,\"time_ms_max\":null,\"time_cv\":null,\"tflops\":null,\"gbps\":null,\"rel_err\":null,\"max_abs_err\":null,\"lse_err\":null")
file(WRITE ${bad_dir}/weird_status.json
     "{\"context\": {}, \"benchmarks\": [{\"name\": \"x\", \"status\": \"weird\", \"time_ms\": null, ${ok_entry}}]}")
file(WRITE ${bad_dir}/time_string.json
     "{\"context\": {}, \"benchmarks\": [{\"name\": \"x\", \"status\": \"ok\", \"time_ms\": \"fast\", ${ok_entry}}]}")
file(WRITE ${bad_dir}/sweep_deep.json "${deep_open}${deep_close}")
# Block layouts: float32 instead of 0/1 bytes, and a 2 x 2 uint8 layout.
execute_process(COMMAND python3 ${cli_dir}/make_layouts.py ${bad_dir})
# e4m3 codes: valid uint8 codes, NaN codes 0x7F/0xFF, a float32 tensor to mix in.
execute_process(COMMAND python3 ${cli_dir}/make_fp8_inputs.py ${bad_dir})
# Shapes: a Q with a zero-length axis beside valid K/V.
execute_process(COMMAND python3 ${cli_dir}/make_shape_inputs.py ${bad_dir})
file(WRITE ${bad_dir}/sweep_unknown_key.json "{\"name\": \"s\", \"grups\": [], \"groups\": [{\"seq\": 64}]}")
file(WRITE ${bad_dir}/sweep_duplicate_axis.json "{\"groups\": [{\"seq\": 64, \"seq\": 128}]}")
file(WRITE ${bad_dir}/sweep_duplicate_groups.json "{\"groups\": [{\"seq\": 64}], \"groups\": [{\"seq\": 128}]}")
set(kv_ok "--k ${bad_dir}/kv_1x2x8x16.npy --v ${bad_dir}/kv_1x2x8x16.npy")
set(fp8_run "run --variant flash2 --backend cpu --out ${bad_dir}/o.npy --q ${bad_dir}/q_u1.npy --k ${bad_dir}/k_u1.npy")
set(bad_inputs_named
  "shard_negative|0 <= i < n|sweep --backend cpu --shard -1/4 --dry-run"
  "shard_zero_count|0 <= i < n|sweep --backend cpu --shard 0/0 --dry-run"
  "filter_bad_re2|(?<|sweep --backend cpu --filter (?<x --dry-run"
  "sweep_file_directory|is a directory|sweep --sweep-file ${bad_dir}/a_directory --dry-run"
  "sweep_file_deep|deeper than 64|sweep --sweep-file ${bad_dir}/sweep_deep.json --dry-run"
  "run_q_directory|is a directory|run --variant flash2 --q ${bad_dir}/a_directory --k x --v y --out ${bad_dir}/o.npy"
  "gbench_bad_value|abc|sweep --benchmark_repetitions=abc --dry-run"
  "merge_deep|deeper than 64|merge --out ${bad_dir}/m.json ${bad_dir}/deep.json"
  "merge_deep_context|deep_context.json|merge --out ${bad_dir}/m.json ${bad_dir}/deep_context.json"
  "merge_not_json|not_json.json|merge --out ${bad_dir}/m.json ${bad_dir}/not_json.json"
  "merge_directory|is a directory|merge --out ${bad_dir}/m.json ${bad_dir}/a_directory"
  "merge_benchmarks_object|field 'benchmarks'|merge --out ${bad_dir}/m.json ${bad_dir}/bench_object.json"
  "merge_context_list|field 'context'|merge --out ${bad_dir}/m.json ${bad_dir}/context_list.json"
  "merge_context_shard|field 'context.shard'|merge --out ${bad_dir}/m.json ${bad_dir}/context_shard.json"
  "merge_name_only|field 'variant' is missing|merge --out ${bad_dir}/m.json ${bad_dir}/name_only.json"
  "merge_entry_number|benchmarks[0]|merge --out ${bad_dir}/m.json ${bad_dir}/entry_number.json"
  "merge_weird_status|field 'status'|merge --out ${bad_dir}/m.json ${bad_dir}/weird_status.json"
  "merge_time_string|field 'time_ms'|merge --out ${bad_dir}/m.json ${bad_dir}/time_string.json"
  "mask_strided_no_stride|strided:4|sweep --backend cpu --mask strided:4 --dry-run"
  "mask_random_too_many|random:64,17|sweep --backend cpu --mask random:64,17 --dry-run"
  "mask_none_with_sparse|none+random:64,2|sweep --backend cpu --mask none+random:64,2 --dry-run"
  "mask_layout_missing|/nonexistent/l.npy|sweep --backend cpu --mask layout:64:/nonexistent/l.npy --dry-run"
  "mask_layout_dtype|'<f4'|sweep --backend cpu --mask layout:64:${bad_dir}/layout_f4.npy --dry-run"
  "mask_layout_shape|b=64 with Nq=1024|sweep --backend cpu --seq 1024 --mask layout:64:${bad_dir}/layout_2x2.npy --dry-run"
  "mask_layout_b_mismatch|differs from layout block size|sweep --backend cpu --mask random:32,1+layout:64:${bad_dir}/layout_2x2.npy --dry-run"
  "run_e4m3_codes_without_scales|need --scales|${fp8_run} --v ${bad_dir}/v_nan7f.npy --dtype e4m3"
  "run_e4m3_codes_without_e4m3|q_u1.npy|${fp8_run} --v ${bad_dir}/v_nan7f.npy --dtype bf16"
  "run_e4m3_nan_code_7f|v_nan7f.npy: element 100 is 0x7F|${fp8_run} --v ${bad_dir}/v_nan7f.npy --dtype e4m3 --scales 1,1,1"
  "run_e4m3_nan_code_ff|v_nanff.npy: element 100 is 0xFF|${fp8_run} --v ${bad_dir}/v_nanff.npy --dtype e4m3 --scales 1,1,1"
  "run_e4m3_mixed_codes_and_floats|k_f4.npy|run --variant flash2 --backend cpu --out ${bad_dir}/o.npy --q ${bad_dir}/q_u1.npy --k ${bad_dir}/k_f4.npy --v ${bad_dir}/v_nan7f.npy --dtype e4m3 --scales 1,1,1"
  "run_e4m3_scales_with_floats|--scales is for uint8|run --variant flash2 --backend cpu --out ${bad_dir}/o.npy --q ${bad_dir}/k_f4.npy --k ${bad_dir}/k_f4.npy --v ${bad_dir}/k_f4.npy --dtype e4m3 --scales 1,1,1"
  "run_scales_without_e4m3|--dtype fp32|${fp8_run} --v ${bad_dir}/v_nan7f.npy --scales 1,1,1"
  "run_scales_zero|q scale '0'|${fp8_run} --v ${bad_dir}/v_nan7f.npy --dtype e4m3 --scales 0,1,1"
  "run_scales_negative|k scale '-0.5'|${fp8_run} --v ${bad_dir}/v_nan7f.npy --dtype e4m3 --scales 1,-0.5,1"
  "run_scales_nan|v scale 'nan'|${fp8_run} --v ${bad_dir}/v_nan7f.npy --dtype e4m3 --scales 1,1,nan"
  "run_scales_inf|q scale 'inf'|${fp8_run} --v ${bad_dir}/v_nan7f.npy --dtype e4m3 --scales inf,1,1"
  "run_scales_float32_overflow|v scale '1e39'|${fp8_run} --v ${bad_dir}/v_nan7f.npy --dtype e4m3 --scales 1,1,1e39"
  "run_scales_unparsable|k scale '0.5x'|${fp8_run} --v ${bad_dir}/v_nan7f.npy --dtype e4m3 --scales 1,0.5x,1"
  "run_scales_count|got 2|${fp8_run} --v ${bad_dir}/v_nan7f.npy --dtype e4m3 --scales 1,1"
  "axis_flag_twice|'--seq' is given twice|sweep --backend cpu --seq 512 --heads 4 --seq=1024 --dry-run"
  "option_twice|'--out' is given twice|merge --out ${bad_dir}/m.json --out=${bad_dir}/n.json ${CMAKE_CURRENT_SOURCE_DIR}/python/fixtures/cpu_harness.json"
  "flag_twice|'--hot' is given twice|sweep --backend cpu --hot --hot --dry-run"
  "empty_out|'--out' has an empty value|sweep --backend cpu --seq 64 --variant flash2 --out="
  "empty_variant|'--variant' has an empty value|sweep --backend cpu --variant= --dry-run"
  "sweep_file_unknown_key|'grups'|sweep --sweep-file ${bad_dir}/sweep_unknown_key.json --dry-run"
  "sweep_file_duplicate_axis|'seq' twice|sweep --sweep-file ${bad_dir}/sweep_duplicate_axis.json --dry-run"
  "sweep_file_duplicate_groups|'groups' twice|sweep --sweep-file ${bad_dir}/sweep_duplicate_groups.json --dry-run"
  "sweep_out_unwritable|/proc/attnbench-no/r.json|sweep --backend cpu --seq 64 --variant flash2 --out /proc/attnbench-no/r.json"
  "sweep_out_unwritable_file|/proc/r.json|sweep --backend cpu --seq 64 --variant flash2 --out /proc/r.json"
  "merge_out_unwritable|/proc/m.json|merge --out /proc/m.json ${CMAKE_CURRENT_SOURCE_DIR}/python/fixtures/cpu_harness.json"
  "run_out_unwritable|/proc/o.npy|run --variant flash2 --backend cpu --q ${bad_dir}/kv_1x2x8x16.npy ${kv_ok} --out /proc/o.npy"
  "run_lse_unwritable|/proc/l.npy|run --variant flash2 --backend cpu --q ${bad_dir}/kv_1x2x8x16.npy ${kv_ok} --out ${bad_dir}/o.npy --lse /proc/l.npy"
  "run_zero_length_axis|q_zero_len.npy|run --variant flash2 --backend cpu --q ${bad_dir}/q_zero_len.npy ${kv_ok} --out ${bad_dir}/o.npy"
  "run_pass_unknown|'backward'|run --variant flash2 --backend cpu --pass backward --q ${bad_dir}/kv_1x2x8x16.npy ${kv_ok} --out ${bad_dir}/o.npy"
  "run_bwd_without_do|needs --do|run --variant flash2 --backend cpu --pass bwd --q ${bad_dir}/kv_1x2x8x16.npy ${kv_ok} --dq ${bad_dir}/dq.npy --dk ${bad_dir}/dk.npy --dv ${bad_dir}/dv.npy"
  "run_bwd_without_dk|needs --dk|run --variant flash2 --backend cpu --pass fwd_bwd --q ${bad_dir}/kv_1x2x8x16.npy ${kv_ok} --do ${bad_dir}/kv_1x2x8x16.npy --dq ${bad_dir}/dq.npy --dv ${bad_dir}/dv.npy"
  "run_do_with_fwd|--do is for --pass bwd|run --variant flash2 --backend cpu --q ${bad_dir}/kv_1x2x8x16.npy ${kv_ok} --out ${bad_dir}/o.npy --do ${bad_dir}/kv_1x2x8x16.npy"
  "run_do_shape|q_zero_len.npy: dO must have Q's shape|run --variant flash2 --backend cpu --pass bwd --q ${bad_dir}/kv_1x2x8x16.npy ${kv_ok} --do ${bad_dir}/q_zero_len.npy --dq ${bad_dir}/dq.npy --dk ${bad_dir}/dk.npy --dv ${bad_dir}/dv.npy"
  "run_bwd_unclaimed|runs passes fwd only, not bwd|run --variant flash1 --backend cpu --pass bwd --q ${bad_dir}/kv_1x2x8x16.npy ${kv_ok} --do ${bad_dir}/kv_1x2x8x16.npy --dq ${bad_dir}/dq.npy --dk ${bad_dir}/dk.npy --dv ${bad_dir}/dv.npy"
  "run_dq_unwritable|/proc/dq.npy|run --variant flash2 --backend cpu --pass bwd --q ${bad_dir}/kv_1x2x8x16.npy ${kv_ok} --do ${bad_dir}/kv_1x2x8x16.npy --dq /proc/dq.npy --dk ${bad_dir}/dk.npy --dv ${bad_dir}/dv.npy"
  "sweep_pass_unknown|'bwdd'|sweep --backend cpu --pass fwd,bwdd --dry-run"
  "merge_out_directory|is a directory|merge --out ${bad_dir}/a_directory ${CMAKE_CURRENT_SOURCE_DIR}/python/fixtures/cpu_harness.json"
  "scan_state_range|N=300|sweep --backend cpu --variant tag:scan --state 300 --dry-run"
  "scan_state_zero|'0'|sweep --backend cpu --variant tag:scan --state 0 --dry-run"
  "scan_groups_range|G=5000|sweep --backend cpu --variant tag:scan --groups 5000 --dry-run")
foreach(item ${bad_inputs_named})
  string(FIND "${item}" "|" bar)
  string(SUBSTRING "${item}" 0 ${bar} name)
  math(EXPR start "${bar} + 1")
  string(SUBSTRING "${item}" ${start} -1 rest)
  string(FIND "${rest}" "|" bar)
  string(SUBSTRING "${rest}" 0 ${bar} needle)
  math(EXPR start "${bar} + 1")
  string(SUBSTRING "${rest}" ${start} -1 args)
  separate_arguments(args UNIX_COMMAND "${args}")
  add_test(NAME cli_bad_input_${name}
           COMMAND bash ${cli_dir}/expect_bad_input.sh --names "${needle}" ${attnbench_bin} ${args})
  set_tests_properties(cli_bad_input_${name} PROPERTIES LABELS "nogpu;cli" TIMEOUT 60)
endforeach()

# A pathological --filter finishes at once (RE2: linear time).
add_test(NAME cli_filter_linear_time
         COMMAND ${attnbench_bin} sweep --backend cpu --preset full --filter "(.*)*Z" --dry-run)
set_tests_properties(cli_filter_linear_time PROPERTIES LABELS "nogpu;cli" TIMEOUT 10)

# Resume guard (sweep identity, schema, lock) and full-disk writes (tmpfs; skips when not root).
add_test(NAME cli_resume_guard COMMAND bash ${cli_dir}/resume_guard.sh ${attnbench_bin}
                                       ${CMAKE_CURRENT_BINARY_DIR}/cli_resume_guard)
add_test(NAME cli_disk_full COMMAND bash ${cli_dir}/disk_full.sh ${attnbench_bin}
                                    ${CMAKE_CURRENT_BINARY_DIR}/cli_disk_full)
set_tests_properties(cli_resume_guard cli_disk_full PROPERTIES LABELS "nogpu;cli" TIMEOUT 120)
set_tests_properties(cli_disk_full PROPERTIES SKIP_RETURN_CODE 77)

add_test(NAME cli_list COMMAND ${attnbench_bin} list --backend cpu)
# The backward on users' tensors (docs/backward.md): dQ, dK, dV written.
add_test(NAME cli_run_bwd
         COMMAND bash -c "$<TARGET_FILE:attnbench> run --variant flash2 --backend cpu --pass bwd --mask causal --q ${bad_dir}/kv_1x2x8x16.npy --k ${bad_dir}/kv_1x2x8x16.npy --v ${bad_dir}/kv_1x2x8x16.npy --do ${bad_dir}/kv_1x2x8x16.npy --dq ${bad_dir}/bwd_dq.npy --dk ${bad_dir}/bwd_dk.npy --dv ${bad_dir}/bwd_dv.npy && test -s ${bad_dir}/bwd_dq.npy && test -s ${bad_dir}/bwd_dk.npy && test -s ${bad_dir}/bwd_dv.npy")
set_tests_properties(cli_run_bwd PROPERTIES LABELS "nogpu;cli" TIMEOUT 60)
add_test(NAME cli_dry_run_quick COMMAND ${attnbench_bin} sweep --backend cpu --preset quick --dry-run)
add_test(NAME cli_kill_and_resume
         COMMAND bash ${cli_dir}/kill_resume.sh ${attnbench_bin} ${CMAKE_SOURCE_DIR}/scripts/resume_sweep.sh
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_kill_resume)
set_tests_properties(cli_list cli_dry_run_quick cli_kill_and_resume PROPERTIES LABELS "nogpu;cli" TIMEOUT 300)

# The presets list every CUDA row without a device (a dry run opens no backend).
if(ATTNBENCH_WITH_CUDA)
  foreach(preset quick decode)
    add_test(NAME cli_cuda_dry_run_${preset}
             COMMAND ${attnbench_bin} sweep --preset ${preset} --backend cuda --dry-run)
    set_tests_properties(cli_cuda_dry_run_${preset} PROPERTIES LABELS "nogpu;cli" TIMEOUT 60)
  endforeach()
  set_tests_properties(cli_cuda_dry_run_quick PROPERTIES PASS_REGULAR_EXPRESSION
    "flash2/cuda/bf16/[^\n]* run\n.*sparse/cuda/[^\n]* run\n.*flash2_gqa_packed/cuda/[^\n]* run")
  set_tests_properties(cli_cuda_dry_run_decode PROPERTIES PASS_REGULAR_EXPRESSION
    "flash2_splitkv/cuda/[^\n]*Nkv:131072[^\n]* run")
endif()

# A CPU-only run maps no CUDA library: the CUDA backend is a module loaded on
# demand (harness/cuda_module.hpp). The control: `list` loads the module, and the same
# check must see libcudart there.
set(ab_nocuda_work ${CMAKE_CURRENT_BINARY_DIR}/cli_cuda_libs)
add_test(NAME cli_no_cuda_libs_run
         COMMAND bash ${cli_dir}/cuda_libs.sh absent ${attnbench_bin} ${ab_nocuda_work}/run
                 run --backend cpu --variant flash2 --q q.npy --k k.npy --v v.npy --out o.npy --repeat 2)
add_test(NAME cli_no_cuda_libs_sweep
         COMMAND bash ${cli_dir}/cuda_libs.sh absent ${attnbench_bin} ${ab_nocuda_work}/sweep
                 sweep --backend cpu --variant naive --seq 64 --heads 1 --head-dim 32 --reps 1 --no-ceilings
                 --out r.json)
set_tests_properties(cli_no_cuda_libs_run cli_no_cuda_libs_sweep PROPERTIES LABELS "nogpu;cli" TIMEOUT 60)
if(ATTNBENCH_WITH_CUDA)
  add_test(NAME cli_no_cuda_libs_negative_control
           COMMAND bash ${cli_dir}/cuda_libs.sh present ${attnbench_bin} ${ab_nocuda_work}/list list)
  set_tests_properties(cli_no_cuda_libs_negative_control PROPERTIES LABELS "nogpu;cli" TIMEOUT 60)
endif()

# The Slurm job scripts (scripts/slurm/) on a one-node Slurm cluster started by the test
# (tests/slurm/; ~30 s): skipped with the reason (exit 77) when Slurm is not installed or the
# daemons cannot start.
add_test(NAME cli_slurm_job_array
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm_job_array.sh ${attnbench_bin} ${CMAKE_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_slurm_job_array)
set_tests_properties(cli_slurm_job_array PROPERTIES LABELS "nogpu;cli;slurm" TIMEOUT 600 SKIP_RETURN_CODE 77
                     RESOURCE_LOCK slurm)

# benchmarks/cpu_vs_mambapy.py on a small shape: its outputs agree with mambapy's
# (relative L2 <= 1e-4, measured 1.1e-7), which also checks that the script rebuilds attnbench's
# scan parameters exactly; the negative control at tolerance 1e-9 must fail (exit 1), so the
# comparison is live. Skipped (77) without torch and mambapy (scripts/setup.sh). ~5 s each.
foreach(kind agree control)
  set(tol 1e-4)
  if(kind STREQUAL control)
    set(tol 1e-9)
  endif()
  add_test(NAME cli_mambapy_outputs_${kind}
           COMMAND bash -c "python3 -c 'import torch, mambapy' 2>/dev/null || exit 77; python3 $0/benchmarks/cpu_vs_mambapy.py --attnbench $1 --heads 2 --head-dim 16 --seq 100 --rounds 1 --repeat 1 --tolerance ${tol}"
                   ${CMAKE_SOURCE_DIR} ${attnbench_bin})
  set_tests_properties(cli_mambapy_outputs_${kind} PROPERTIES LABELS "nogpu;cli" TIMEOUT 120 SKIP_RETURN_CODE 77)
endforeach()
set_tests_properties(cli_mambapy_outputs_control PROPERTIES PASS_REGULAR_EXPRESSION "outputs differ: relative L2")
