# One way to plant a defect in a copy of a source (every negative control of the emulator and
# of the layout oracle): ab_mutate(TEXT_VAR FROM TO WHAT) replaces in ${TEXT_VAR} the one place
# where FROM occurs token for token. Whitespace and line breaks between tokens are free, so a
# clang-format run over the kernels (any column limit, brace style or alignment) leaves every
# control working (ctest static.mutations_survive_format reformats a copy and configures it);
# a FROM found zero or two times stops the configure, naming WHAT, so a refactor cannot
# silently disarm a control. Comments are text: keep FROM to code.

# The regular expression of FROM: its non-blank characters in order, escaped, with optional
# whitespace between them, and required whitespace where FROM separated two identifier
# characters (`const float`).
function(ab_mutation_regex out from)
  set(ws "[ \t\r\n]")
  set(rx "")
  set(prev "")
  set(gap OFF)
  string(LENGTH "${from}" n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last})
    string(SUBSTRING "${from}" ${i} 1 c)
    if(c MATCHES "^[ \t\r\n]$")
      set(gap ON)
      continue()
    endif()
    if(NOT prev STREQUAL "")
      if(gap AND prev MATCHES "^[A-Za-z0-9_]$" AND c MATCHES "^[A-Za-z0-9_]$")
        string(APPEND rx "${ws}+")
      elseif(NOT (prev MATCHES "^[A-Za-z0-9_]$" AND c MATCHES "^[A-Za-z0-9_]$"))
        string(APPEND rx "${ws}*")
      endif()
    endif()
    if(c MATCHES "^[][\\^$.|?*+(){}]$")
      string(APPEND rx "\\${c}")
    elseif(c STREQUAL ";")
      string(APPEND rx "[;]")
    else()
      string(APPEND rx "${c}")
    endif()
    set(prev "${c}")
    set(gap OFF)
  endforeach()
  set(${out} "${rx}" PARENT_SCOPE)
endfunction()

function(ab_mutate text_var from to what)
  ab_mutation_regex(rx "${from}")
  set(text "${${text_var}}")
  string(REGEX MATCH "${rx}" hit "${text}")
  set(count 0)
  if(NOT hit STREQUAL "")
    string(FIND "${text}" "${hit}" at)
    string(LENGTH "${hit}" len)
    math(EXPR after "${at} + ${len}")
    string(SUBSTRING "${text}" 0 ${at} head)
    string(SUBSTRING "${text}" ${after} -1 tail)
    string(REGEX MATCH "${rx}" again "${tail}")
    set(count 1)
    if(NOT again STREQUAL "")
      set(count 2)
    endif()
  endif()
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "${what}: the code to mutate is found ${count} times (must be once):\n${from}\n"
                        "Plant the same defect in the refactored source (tests/emu/mutate.cmake).")
  endif()
  set(${text_var} "${head}${to}${tail}" PARENT_SCOPE)
endfunction()
