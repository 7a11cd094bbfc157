# ctest layering.one-way: the layers' include rules hold in the build itself.
# For each layer, with exactly the include directories its object library is
# compiled with (plus ns-3's): its headers preprocess (so none reaches a layer
# it may not use), and no header of a layer it may not use can be found at
# all (so a wrong-way include in a source fails to build).
# Arguments (-D; lists comma-separated): CXX, LAYERS (bottom first),
# HEADERS_<layer>, INCLUDES_<layer> (that layer's include directories),
# NS3_INCLUDES, WORK.
# The architecture (doc/gpu-fabric.rst, Design), written here on its own so
# that a build rule loosened in CMakeLists.txt fails this test.
set(may_use_common common)
set(may_use_topology common topology)
set(may_use_fabric common topology fabric)
set(may_use_transport common topology fabric transport)
set(may_use_collective common topology fabric transport collective)
set(may_use_synthesis common topology fabric transport collective synthesis)
set(may_use_workload common topology fabric transport collective workload)
set(may_use_helper common topology fabric transport collective synthesis workload helper)
file(MAKE_DIRECTORY ${WORK})
foreach(var LAYERS NS3_INCLUDES)
  string(REPLACE "," ";" ${var} "${${var}}")
endforeach()
foreach(layer ${LAYERS})
  string(REPLACE "," ";" HEADERS_${layer} "${HEADERS_${layer}}")
  string(REPLACE "," ";" INCLUDES_${layer} "${INCLUDES_${layer}}")
endforeach()
set(failures "")
foreach(layer ${LAYERS})
  set(flags -std=c++17 -E)
  foreach(dir ${INCLUDES_${layer}} ${NS3_INCLUDES})
    list(APPEND flags -I${dir})
  endforeach()
  # its own headers, all in one translation unit
  set(probe ${WORK}/${layer}.cc)
  set(text "")
  foreach(header ${HEADERS_${layer}})
    get_filename_component(name ${header} NAME)
    string(APPEND text "#include \"ns3/${name}\"\n")
  endforeach()
  file(WRITE ${probe} "${text}")
  execute_process(COMMAND ${CXX} ${flags} ${probe} -o ${WORK}/${layer}.i
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    string(APPEND failures "a header of ${layer} needs one it may not use:\n${err}\n")
  endif()
  # every header of a layer it may not use: not found at all
  foreach(other ${LAYERS})
    list(FIND may_use_${layer} ${other} allowed)
    if(allowed GREATER -1)
      continue()
    endif()
    foreach(header ${HEADERS_${other}})
      get_filename_component(name ${header} NAME)
      set(probe ${WORK}/${layer}-${name}.cc)
      file(WRITE ${probe} "#include \"ns3/${name}\"\n")
      execute_process(COMMAND ${CXX} ${flags} ${probe} -o ${WORK}/out.i
                      RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
      if(rc EQUAL 0)
        string(APPEND failures "${layer} can include ${name} of ${other}, a layer it may not use\n")
      elseif(NOT err MATCHES "ns3/${name}: No such file")
        string(APPEND failures "${layer} including ${name} failed, but not for want of it:\n${err}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(failures)
  message(FATAL_ERROR "layering broken:\n${failures}")
endif()
message(STATUS "layering holds: ${LAYERS}")
