# Standalone build support: find Debian's installed ns-3 and provide the small
# subset of ns-3's module macros that gpu-fabric's CMakeLists.txt uses.
# Facts behind each step: ../shared/reference/ns3-build-notes.md.

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

option(GPU_FABRIC_TESTS "Build the GoogleTest suites" ON)
option(GPU_FABRIC_EXAMPLES "Build examples and benchmarks" ON)
option(GPU_FABRIC_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(GPU_FABRIC_PYTHON "Build the Python bindings (pybind11)" ON)
option(GPU_FABRIC_MPI "Distributed runs on ns-3's MPI simulator (needs an ns-3 built with MPI)" OFF)

if(GPU_FABRIC_SANITIZE)
  # -O1 as AddressSanitizer's documentation advises: it halves the compile
  # time of -O3 with instrumentation (test-fabric.cc: 102 s -> 46 s) and
  # keeps the run fast enough; the Release suite runs the -O3 code.
  add_compile_options(-O1 -fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # checks too costly for a Release build's hot path run in this one (CI)
  add_compile_definitions(GPU_FABRIC_CHECK_INVARIANTS)
endif()

# A plain find_package(ns3) accepts the installed 3.37; "3.37" as a version
# requirement fails against ns-3's exact-version config file.
find_package(ns3 REQUIRED)

# ns-3 < 3.43 names its targets ns3::libcore, later ones ns3::core. core and
# network are required; the Internet stack's modules only build the fabric-ip
# example and test (the MPI build's ns-3 leaves them out); mpi is the
# distributed build's (GPU_FABRIC_MPI).
set(GPU_FABRIC_NS3_IP ON)
foreach(mod core network internet applications flow-monitor traffic-control mpi)
  if(TARGET ns3::lib${mod})
    set(lib${mod} ns3::lib${mod})
  elseif(TARGET ns3::${mod})
    set(lib${mod} ns3::${mod})
  elseif(mod STREQUAL "core" OR mod STREQUAL "network")
    message(FATAL_ERROR "ns-3 module '${mod}' not found in the installed ns-3")
  elseif(mod STREQUAL "mpi")
    if(GPU_FABRIC_MPI)
      message(FATAL_ERROR "GPU_FABRIC_MPI needs an ns-3 built with MPI (its mpi module); "
                          "scripts/build.sh --mpi builds one (doc/gpu-fabric.rst, Distributed runs)")
    endif()
  else()
    set(GPU_FABRIC_NS3_IP OFF)
  endif()
endforeach()
if(GPU_FABRIC_MPI)
  set(GPU_FABRIC_NS3_MPI_LIBRARY ${libmpi})
endif()

# Debian links with --as-needed: a program that reaches our library only
# through the TypeId system would drop it and its TypeIds would be missing.
set(LIB_AS_NEEDED_PRE -Wl,--no-as-needed)
set(LIB_AS_NEEDED_POST -Wl,--as-needed)

set(GPU_FABRIC_HEADER_DIR ${CMAKE_BINARY_DIR}/include)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Look-alike of ns-3's build_lib: a shared library lib<name> whose public
# headers are exposed flat as ns3/<file>.h, plus a generated ns3/<name>-module.h.
function(build_lib)
  cmake_parse_arguments(BLIB "" "LIBNAME"
                        "SOURCE_FILES;HEADER_FILES;LIBRARIES_TO_LINK;TEST_SOURCES" ${ARGN})
  set(target lib${BLIB_LIBNAME})
  set(module_header ${GPU_FABRIC_HEADER_DIR}/ns3/${BLIB_LIBNAME}-module.h)
  set(content "// generated: includes every public header of ${BLIB_LIBNAME}\n")
  foreach(header ${BLIB_HEADER_FILES})
    get_filename_component(name ${header} NAME)
    configure_file(${header} ${GPU_FABRIC_HEADER_DIR}/ns3/${name} COPYONLY)
    string(APPEND content "#include \"ns3/${name}\"\n")
  endforeach()
  file(GENERATE OUTPUT ${module_header} CONTENT "${content}")

  # One object library per layer (GPU_FABRIC_LAYER_ORDER, bottom first), each
  # compiled against its own headers and those of the layers it may use
  # (GPU_FABRIC_LAYER_USES_<layer>), so that an include the wrong way fails to
  # build. The shared library is all of them.
  set(objects)
  foreach(layer ${GPU_FABRIC_LAYER_ORDER})
    set(layer_dir ${CMAKE_BINARY_DIR}/layers/${layer})
    file(MAKE_DIRECTORY ${layer_dir}/ns3)
    set(layer_target ${target}-${layer})
    set(layer_sources)
    foreach(file ${BLIB_SOURCE_FILES} ${BLIB_HEADER_FILES})
      get_filename_component(dir ${file} DIRECTORY)
      get_filename_component(dir ${dir} NAME)
      if(dir STREQUAL layer)
        if(file MATCHES "\\.h$")
          get_filename_component(name ${file} NAME)
          configure_file(${file} ${layer_dir}/ns3/${name} COPYONLY)
        else()
          list(APPEND layer_sources ${file})
        endif()
      endif()
    endforeach()
    if(NOT layer_sources)
      continue()
    endif()
    add_library(${layer_target} OBJECT ${layer_sources})
    target_include_directories(${layer_target} PRIVATE ${layer_dir})
    foreach(below ${GPU_FABRIC_LAYER_USES_${layer}})
      target_include_directories(${layer_target} PRIVATE ${CMAKE_BINARY_DIR}/layers/${below})
    endforeach()
    # generated headers of the layer (protoc's, CMakeLists.txt)
    if(GPU_FABRIC_LAYER_INCLUDES_${layer})
      target_include_directories(${layer_target} PRIVATE ${GPU_FABRIC_LAYER_INCLUDES_${layer}})
    endif()
    target_link_libraries(${layer_target} PRIVATE ${GPU_FABRIC_PRIVATE_LIBRARIES})
    target_compile_definitions(${layer_target} PUBLIC NS3_LOG_ENABLE NS3_ASSERT_ENABLE)
    target_compile_options(${layer_target} PRIVATE -Wall -Wextra)
    # The data plane's per-packet calls stay inside the library; a shared
    # library's functions may otherwise be replaced at load time (semantic
    # interposition), so the compiler neither inlines nor calls them directly
    # (fabric-throughput at 1,024 hosts: 3.7 % faster, every one of twelve
    # alternating pairs; doc/gpu-fabric.rst, packet-level speed).
    if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
      target_compile_options(${layer_target} PRIVATE -fno-semantic-interposition)
    endif()
    target_link_libraries(${layer_target} PUBLIC ${BLIB_LIBRARIES_TO_LINK})
    list(APPEND objects $<TARGET_OBJECTS:${layer_target}>)
  endforeach()
  add_library(${target} SHARED ${objects})
  add_library(ns3::${target} ALIAS ${target})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${GPU_FABRIC_HEADER_DIR}>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # The module's own build logs and asserts (NS_LOG, NS_ASSERT); Debian's
  # ns3:: targets do not define these, and a consumer's build is its own: the
  # definitions are not passed on.
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  target_link_libraries(${target} PUBLIC ${BLIB_LIBRARIES_TO_LINK})
  target_link_libraries(${target} PRIVATE ${GPU_FABRIC_PRIVATE_LIBRARIES})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ns3-${BLIB_LIBNAME}
                                             VERSION ${PROJECT_VERSION} SOVERSION 0)
  set(lib${BLIB_LIBNAME} ${target} PARENT_SCOPE)
  set(GPU_FABRIC_INSTALL_HEADERS ${BLIB_HEADER_FILES} ${module_header} PARENT_SCOPE)
endfunction()

# Look-alike of ns-3's build_lib_example: one program linked, without
# --as-needed, against the module and the listed libraries.
function(build_lib_example)
  cmake_parse_arguments(BLIB_EXAMPLE "" "NAME" "SOURCE_FILES;HEADER_FILES;LIBRARIES_TO_LINK"
                        ${ARGN})
  add_executable(${BLIB_EXAMPLE_NAME} ${BLIB_EXAMPLE_SOURCE_FILES})
  # plain signature, as ns-3's build_exec uses
  target_link_libraries(${BLIB_EXAMPLE_NAME} ${LIB_AS_NEEDED_PRE}
                        ${BLIB_EXAMPLE_LIBRARIES_TO_LINK} ${LIB_AS_NEEDED_POST})
  target_compile_options(${BLIB_EXAMPLE_NAME} PRIVATE -Wall -Wextra)
  target_include_directories(${BLIB_EXAMPLE_NAME} PRIVATE ${Boost_INCLUDE_DIRS})
endfunction()

# Everything after the library: programs, tests, install and package config.
macro(gpu_fabric_standalone_finish)
  if(GPU_FABRIC_PYTHON)
    # pybind11's FindPython mode: it finds the interpreter and headers itself
    set(PYBIND11_FINDPYTHON ON)
    # Debian's python3 (whose headers python3-dev installs), not one first on
    # PATH (pyenv, a venv); -DPython_EXECUTABLE=... chooses another
    if(NOT Python_EXECUTABLE AND EXISTS /usr/bin/python3)
      set(Python_EXECUTABLE /usr/bin/python3)
    endif()
    find_package(Python COMPONENTS Interpreter Development REQUIRED)
    find_package(pybind11 CONFIG REQUIRED)
    add_subdirectory(bindings)
  endif()
  if(GPU_FABRIC_EXAMPLES)
    add_subdirectory(examples)
    add_subdirectory(bench)
  endif()
  if(GPU_FABRIC_TESTS)
    enable_testing()
    add_subdirectory(test)
  endif()

  # What a consumer links, gpu-fabric::libgpu-fabric, keeps the library
  # linked even under --as-needed: a program may use the module only by
  # TypeId name (Config::SetDefault, --ns3:: flags), and a library dropped by
  # the linker registers no types. push-state/pop-state leave the consumer's
  # own as-needed setting as it was for the libraries after it.
  set_target_properties(libgpu-fabric PROPERTIES EXPORT_NAME libgpu-fabric-shared)
  add_library(libgpu-fabric-linked INTERFACE)
  target_link_libraries(libgpu-fabric-linked INTERFACE "-Wl,--push-state,--no-as-needed"
                        libgpu-fabric "-Wl,--pop-state")
  set_target_properties(libgpu-fabric-linked PROPERTIES EXPORT_NAME libgpu-fabric)
  install(TARGETS libgpu-fabric libgpu-fabric-linked EXPORT gpu-fabric-targets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${GPU_FABRIC_INSTALL_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ns3)
  install(EXPORT gpu-fabric-targets NAMESPACE gpu-fabric::
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpu-fabric)
  configure_package_config_file(
    ${CMAKE_CURRENT_SOURCE_DIR}/cmake/gpu-fabric-config.cmake.in
    ${CMAKE_BINARY_DIR}/gpu-fabric-config.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpu-fabric)
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/gpu-fabric-config-version.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/gpu-fabric-config.cmake
                ${CMAKE_BINARY_DIR}/gpu-fabric-config-version.cmake
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpu-fabric)
endmacro()
