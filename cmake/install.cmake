# cmake/install.cmake: what `cmake --install BUILD --prefix P` puts under P, and the libraries
# made only for it.
#
#   P/include/antheap.h (+ antheap_device.h, antheap_gpu.h where CUDA is built)
#   P/lib/libantheap.a, libantheap.so.MAJOR.MINOR.PATCH (SONAME libantheap.so.SOVERSION)
#       one library holding the whole worker side (api.c over every internal library)
#   P/lib/libantheap_device.a            where CUDA is built (relocatable device code)
#   P/lib/libantheap_gpu.a               where src/gpu is built (CUDA, no sanitizers): GPU
#       offload into regions, the worker side included (ah_install_gpu below)
#   P/bin/antheapd
#   P/lib/cmake/antheap/antheapConfig.cmake, antheapConfigVersion.cmake, antheapTargets*.cmake
#       antheap::antheap (shared), antheap::antheap_static, antheap::device, antheap::gpu,
#       antheap::antheapd
#   P/lib/pkgconfig/antheap.pc
#
# In the build tree nothing changes: apps and tests link the internal static libraries (and the
# target `antheap`) as before. The installed libraries are made from the same object files
# (`$<TARGET_OBJECTS>`), which are therefore compiled as position-independent code.
# Entry points, called by the top-level CMakeLists.txt: ah_install_worker() after src/ is
# added, ah_install_package() once at the end (also in ANTHEAP_GPU_ONLY builds).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
include(CheckCCompilerFlag)

set(AH_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/antheap)
# 0.x: any minor release may change the ABI, so the SONAME carries MAJOR.MINOR.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(AH_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
  set(AH_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()

# ah_internal_libs(OUT targets...): the non-imported static libraries that `targets` link,
# transitively, themselves included (MPI and hwloc are imported and left out).
function(ah_internal_libs out)
  set(found "")
  set(todo ${ARGN})
  while(todo)
    list(POP_FRONT todo t)
    if(NOT TARGET ${t} OR t IN_LIST found)
      continue()
    endif()
    get_target_property(type ${t} TYPE)
    get_target_property(imported ${t} IMPORTED)
    if(imported OR NOT type STREQUAL "STATIC_LIBRARY")
      continue()
    endif()
    list(APPEND found ${t})
    get_target_property(deps ${t} LINK_LIBRARIES)
    if(deps)
      list(APPEND todo ${deps})
    endif()
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# ah_pc_mpi(): how antheap.pc asks for MPI. A pkg-config module of the MPI that CMake found
# (Open MPI's ompi-c, MPICH's mpich), recognised by its include directory; otherwise FindMPI's
# flags written out. ANTHEAP_PC_MPI names a module by hand ("none": always the flags).
function(ah_pc_mpi)
  set(ANTHEAP_PC_MPI "" CACHE STRING
      "pkg-config module for MPI in antheap.pc (empty: found; none: FindMPI's flags instead)")
  set(requires "")
  if(ANTHEAP_PC_MPI AND NOT ANTHEAP_PC_MPI STREQUAL "none")
    set(requires ${ANTHEAP_PC_MPI})
  elseif(NOT ANTHEAP_PC_MPI)
    foreach(module ompi-c mpich mpi-c)
      pkg_check_modules(AH_PC_${module} QUIET ${module})
      foreach(dir IN LISTS MPI_C_INCLUDE_DIRS)
        if(AH_PC_${module}_FOUND AND dir IN_LIST AH_PC_${module}_INCLUDE_DIRS)
          set(requires ${module})
          break()
        endif()
      endforeach()
      if(requires)
        break()
      endif()
    endforeach()
  endif()
  set(cflags "")
  set(libs "")
  if(NOT requires)
    foreach(dir IN LISTS MPI_C_INCLUDE_DIRS)
      string(APPEND cflags " -I${dir}")
    endforeach()
    foreach(def IN LISTS MPI_C_COMPILE_DEFINITIONS)
      string(APPEND cflags " -D${def}")
    endforeach()
    foreach(lib IN LISTS MPI_C_LIBRARIES)
      string(APPEND libs " ${lib}")
    endforeach()
    string(APPEND libs " ${MPI_C_LINK_FLAGS}")
    string(STRIP "${libs}" libs)
  endif()
  message(STATUS "antheap: antheap.pc asks for MPI as: ${requires}${cflags} ${libs}")
  set(AH_PC_REQUIRES "${requires}" PARENT_SCOPE)
  set(AH_PC_MPI_CFLAGS "${cflags}" PARENT_SCOPE)
  set(AH_PC_MPI_LIBS "${libs}" PARENT_SCOPE)
endfunction()

# ah_one_object(OUT KEEP patterns... OBJECTS objects... DEPENDS targets...): link `objects` into
# one relocatable object OUT (ld -r) whose globals are only those matching `patterns` (objcopy;
# undefined symbols stay as they are). Without ld or objcopy, OUT is set to the objects.
function(ah_one_object out)
  cmake_parse_arguments(X "" "" "KEEP;OBJECTS;DEPENDS" ${ARGN})
  if(NOT CMAKE_LINKER OR NOT CMAKE_OBJCOPY)
    message(WARNING "antheap: no ld/objcopy: the installed static libraries keep the internal "
                    "names global")
    set(${out} ${X_OBJECTS} PARENT_SCOPE)
    return()
  endif()
  get_filename_component(name ${${out}} NAME)
  set(keep "")
  foreach(pattern IN LISTS X_KEEP)
    list(APPEND keep --keep-global-symbol=${pattern})
  endforeach()
  add_custom_command(OUTPUT ${${out}}
    COMMAND ${CMAKE_LINKER} -r -o ${${out}}.all "${X_OBJECTS}"
    COMMAND ${CMAKE_OBJCOPY} --wildcard ${keep} ${${out}}.all ${${out}}
    COMMAND ${CMAKE_COMMAND} -E rm -f ${${out}}.all
    DEPENDS ${X_DEPENDS} COMMAND_EXPAND_LISTS VERBATIM
    COMMENT "antheap: one object ${name}, global: ${X_KEEP}")
endfunction()

# ah_install_worker(): libantheap (shared and static) from every object of `antheap` and the
# internal libraries it links, antheapd, antheap.h, antheap.pc.
function(ah_install_worker)
  ah_internal_libs(libs antheap)
  set_target_properties(${libs} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  # PIC code may not assume that a global function is the one it calls (ELF interposition),
  # which would stop gcc inlining within a file; nobody interposes ours (the shared library
  # exports sys_* only), so keep the inlining of the non-PIC build.
  check_c_compiler_flag(-fno-semantic-interposition AH_HAS_NO_INTERPOSITION)
  if(AH_HAS_NO_INTERPOSITION)
    foreach(lib IN LISTS libs)
      target_compile_options(${lib} PRIVATE -fno-semantic-interposition)
    endforeach()
  endif()
  set(objects "")
  foreach(lib IN LISTS libs)
    list(APPEND objects $<TARGET_OBJECTS:${lib}>)
  endforeach()
  message(STATUS "antheap: the installed libantheap holds ${libs}")

  # hwloc under its own name, so that antheapConfig.cmake can make the same target for
  # antheap::antheap_static without touching a consumer's own PkgConfig::HWLOC.
  pkg_check_modules(ANTHEAP_HWLOC REQUIRED QUIET IMPORTED_TARGET hwloc)
  set(include_dirs $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                   $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

  add_library(antheap_shared SHARED ${objects})
  # The static library is one object, linked from all of them (ld -r) with every global but
  # sys_* made local (objcopy), so that a program's own cache_create or pool_init never meets
  # ours: the same names as the shared library shows.
  set(whole ${CMAKE_BINARY_DIR}/lib/antheap.o)
  ah_one_object(whole KEEP sys_* OBJECTS ${objects} DEPENDS ${libs})
  add_library(antheap_static STATIC ${whole})
  foreach(t antheap_shared antheap_static)
    target_include_directories(${t} INTERFACE ${include_dirs})
    target_link_libraries(${t} PUBLIC MPI::MPI_C PRIVATE PkgConfig::ANTHEAP_HWLOC)
    set_target_properties(${t} PROPERTIES OUTPUT_NAME antheap LINKER_LANGUAGE C
                          ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
                          LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
  endforeach()
  set(map ${CMAKE_SOURCE_DIR}/cmake/antheap.map)
  set_target_properties(antheap_shared PROPERTIES EXPORT_NAME antheap
                        VERSION ${PROJECT_VERSION} SOVERSION ${AH_SOVERSION}
                        LINK_DEPENDS ${map})
  set_target_properties(antheap_static PROPERTIES EXPORT_NAME antheap_static)
  # Export sys_* only (cmake/antheap.map); refuse to link with a symbol left undefined, except
  # under sanitizers, whose runtimes a shared library leaves to the executable (clang).
  target_link_options(antheap_shared PRIVATE -Wl,--version-script=${map})
  if(NOT AH_SAN_FLAGS)
    target_link_options(antheap_shared PRIVATE -Wl,--no-undefined)
  endif()

  install(TARGETS antheap_shared antheap_static EXPORT antheapTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(TARGETS antheapd EXPORT antheapTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${CMAKE_SOURCE_DIR}/include/antheap.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

  # antheap.pc, relocatable: its prefix is found from where the file lies (${pcfiledir}), so
  # a prefix may be moved or installed with `cmake --install --prefix` (module trees).
  ah_pc_mpi()
  # hwloc by its library, as `pkg-config --libs hwloc` names it (cmake/antheap.pc.in says why),
  # less the compiler's own directories (CMake asks pkg-config to keep them: -L/usr/lib/...
  # ahead of MPI's -L could pick another MPI's libmpi.so)
  set(AH_PC_HWLOC_LIBS "")
  foreach(flag IN LISTS ANTHEAP_HWLOC_LDFLAGS)
    if(flag MATCHES "^-L(.*)$")
      get_filename_component(dir "${CMAKE_MATCH_1}" REALPATH)
      set(implicit OFF)
      foreach(sys IN LISTS CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
        get_filename_component(sys "${sys}" REALPATH)
        if(dir STREQUAL sys)
          set(implicit ON)
        endif()
      endforeach()
      if(implicit)
        continue()
      endif()
    endif()
    string(APPEND AH_PC_HWLOC_LIBS " ${flag}")
  endforeach()
  string(STRIP "${AH_PC_HWLOC_LIBS}" AH_PC_HWLOC_LIBS)
  set(pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  if(IS_ABSOLUTE "${pcdir}")
    set(AH_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  else()
    file(RELATIVE_PATH up "/_/${pcdir}" "/_")
    string(REGEX REPLACE "/$" "" up "${up}")
    set(AH_PC_PREFIX "\${pcfiledir}/${up}")
  endif()
  foreach(d LIBDIR INCLUDEDIR BINDIR)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
      set(AH_PC_${d} "${CMAKE_INSTALL_${d}}")
    else()
      set(AH_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
    endif()
  endforeach()
  configure_file(${CMAKE_SOURCE_DIR}/cmake/antheap.pc.in ${CMAKE_BINARY_DIR}/antheap.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/antheap.pc DESTINATION ${pcdir})
  set_property(GLOBAL PROPERTY AH_HAS_WORKER ON)
  if(TARGET antheap_gpu)
    ah_install_gpu("${objects}" "${libs}")
  endif()
endfunction()

# ah_install_gpu(OBJECTS LIBS): antheap::gpu, libantheap_gpu.a and antheap_gpu.h, where src/gpu
# built antheap_gpu. Its region.c installs the worker's free hook (src/worker/hook.h), which
# neither installed libantheap exports (sys_* only), so libantheap_gpu.a holds the worker too:
# one object from the worker's objects (OBJECTS of LIBS), region.c and ranges.c with sys_* and
# gpu_* global, and arena.cu's relocatable device code beside it, whose dm_* calls the
# program's device link resolves against antheap::device. A program links antheap::gpu instead
# of antheap::antheap or antheap::antheap_static (it needs neither).
function(ah_install_gpu objects libs)
  set(whole ${CMAKE_BINARY_DIR}/lib/antheap_gpu.o)
  ah_one_object(whole KEEP sys_* gpu_*
                OBJECTS ${objects} $<TARGET_OBJECTS:ah_gpu_ranges> $<TARGET_OBJECTS:antheap_gpu>
                DEPENDS ${libs} ah_gpu_ranges antheap_gpu)
  add_library(antheap_gpu_static STATIC ${whole} $<TARGET_OBJECTS:ah_gpu_arena>)
  target_include_directories(antheap_gpu_static INTERFACE
    $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(antheap_gpu_static PUBLIC antheap_device MPI::MPI_C
                        PRIVATE PkgConfig::ANTHEAP_HWLOC)
  # no device link in the archive: the program's resolves arena.cu's and its own kernels'
  # device symbols at once (as for antheap_gpu in the build tree)
  set_target_properties(antheap_gpu_static PROPERTIES OUTPUT_NAME antheap_gpu EXPORT_NAME gpu
                        LINKER_LANGUAGE C CUDA_RESOLVE_DEVICE_SYMBOLS OFF
                        ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
  install(TARGETS antheap_gpu_static EXPORT antheapTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${CMAKE_SOURCE_DIR}/include/antheap_gpu.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set_property(GLOBAL PROPERTY AH_HAS_GPU ON)
  message(STATUS "antheap: the installed libantheap_gpu holds ${libs} ah_gpu_ranges "
                 "antheap_gpu ah_gpu_arena")
endfunction()

# ah_install_package(): antheapConfig.cmake, its version file and the exported targets.
function(ah_install_package)
  get_property(AH_HAS_WORKER GLOBAL PROPERTY AH_HAS_WORKER)
  get_property(AH_HAS_GPU GLOBAL PROPERTY AH_HAS_GPU)
  if(NOT AH_HAS_GPU)
    set(AH_HAS_GPU OFF)
  endif()
  set(AH_HAS_DEVICE OFF)
  if(TARGET antheap_device)
    set(AH_HAS_DEVICE ON)
  endif()
  if(NOT AH_HAS_WORKER)
    set(AH_HAS_WORKER OFF)
    if(NOT AH_HAS_DEVICE)
      return() # nothing to install (a fuzzing build without nvcc)
    endif()
  endif()
  configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/antheapConfig.cmake.in
                                ${CMAKE_BINARY_DIR}/antheapConfig.cmake
                                INSTALL_DESTINATION ${AH_INSTALL_CMAKEDIR}
                                PATH_VARS CMAKE_INSTALL_BINDIR)
  # 0.x: a minor release may break the API; from 1.0 on, any later release of the major.
  if(PROJECT_VERSION_MAJOR EQUAL 0)
    set(compat SameMinorVersion)
  else()
    set(compat SameMajorVersion)
  endif()
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/antheapConfigVersion.cmake
                                   COMPATIBILITY ${compat})
  install(FILES ${CMAKE_BINARY_DIR}/antheapConfig.cmake
                ${CMAKE_BINARY_DIR}/antheapConfigVersion.cmake
          DESTINATION ${AH_INSTALL_CMAKEDIR})
  install(EXPORT antheapTargets NAMESPACE antheap:: DESTINATION ${AH_INSTALL_CMAKEDIR})
endfunction()
