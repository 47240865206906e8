# The layer rule as tests (label nogpu: needs no GPU): the tree obeys it, and a planted
# violation (kernels/ including harness/) is caught.
add_test(NAME static.layering COMMAND bash ${CMAKE_SOURCE_DIR}/tests/static/check_layers.sh)
set(ab_layer_plant ${CMAKE_CURRENT_BINARY_DIR}/layer_plant)
file(WRITE ${ab_layer_plant}/kernels/cpu/planted.cpp "#include \"harness/sweep.hpp\"\n")
add_test(NAME static.layering_negative_control
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/static/check_layers.sh ${ab_layer_plant})
set_tests_properties(static.layering_negative_control PROPERTIES WILL_FAIL TRUE)
set_tests_properties(static.layering static.layering_negative_control PROPERTIES LABELS nogpu)
