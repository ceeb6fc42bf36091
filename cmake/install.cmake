# cmake/install.cmake: what `cmake --install BUILD --prefix P` puts under P, and the libraries
# made only for it.
#
#   P/include/antheap.h (+ antheap_device.h where CUDA is built)
#   P/lib/libantheap.a, libantheap.so.MAJOR.MINOR.PATCH (SONAME libantheap.so.SOVERSION)
#       one library holding the whole worker side (api.c over every internal library)
#   P/lib/libantheap_device.a            where CUDA is built (relocatable device code)
#   P/bin/antheapd
#   P/lib/cmake/antheap/antheapConfig.cmake, antheapConfigVersion.cmake, antheapTargets*.cmake
#       antheap::antheap (shared), antheap::antheap_static, antheap::device, antheap::antheapd
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
  if(CMAKE_LINKER AND CMAKE_OBJCOPY)
    set(whole ${CMAKE_BINARY_DIR}/lib/antheap.o)
    add_custom_command(OUTPUT ${whole}
      COMMAND ${CMAKE_LINKER} -r -o ${whole}.all "${objects}"
      COMMAND ${CMAKE_OBJCOPY} --wildcard --keep-global-symbol=sys_* ${whole}.all ${whole}
      COMMAND ${CMAKE_COMMAND} -E rm -f ${whole}.all
      DEPENDS ${libs} COMMAND_EXPAND_LISTS VERBATIM
      COMMENT "antheap: one object for libantheap.a, sys_* global")
    add_library(antheap_static STATIC ${whole})
  else()
    message(WARNING "antheap: no ld/objcopy: libantheap.a keeps the internal names global")
    add_library(antheap_static STATIC ${objects})
  endif()
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
endfunction()

# ah_install_package(): antheapConfig.cmake, its version file and the exported targets.
function(ah_install_package)
  get_property(AH_HAS_WORKER GLOBAL PROPERTY AH_HAS_WORKER)
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
