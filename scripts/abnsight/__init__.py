"""abnsight: Nsight Compute output brought back into attnbench JSON.

Modules: units (ncu's unit strings and numbers -> base units), ncu_csv (the
`ncu --csv --page raw` table: header row, unit row, one row per profiled
kernel, the NVTX range of each kernel), merge (sum the kernels of each range
and add dram_bytes_measured, l2_bytes_measured, kernel_time_ncu, ncu_kernels
to the matching benchmark entries). The command is scripts/ncu_merge.py;
docs/profiling.md explains the fields.
"""
