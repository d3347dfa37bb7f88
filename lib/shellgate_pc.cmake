# shellgate_pc.cmake - run by `cmake --install` (install(SCRIPT) in lib/CMakeLists.txt,
# after the SG_PC_* variables and SG_LIB_VERSION are set): writes shellgate.pc
# (SG_PC_OUT, from SG_PC_IN) for the prefix this install uses, which may not be the
# configured one (`cmake --install --prefix P`), and installs it to SG_PC_DESTINATION.
# prefix= is that prefix as written, without a trailing '/' (so '/' gives
# prefix= and libdir=/lib) and with no '.' or '..' component.
cmake_path(SET SG_PC_PREFIX NORMALIZE "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/+$" "" SG_PC_PREFIX "${SG_PC_PREFIX}")
configure_file("${SG_PC_IN}" "${SG_PC_OUT}" @ONLY)
if(NOT IS_ABSOLUTE "${SG_PC_DESTINATION}")   # as install(FILES) places a relative one
  set(SG_PC_DESTINATION "${CMAKE_INSTALL_PREFIX}/${SG_PC_DESTINATION}")
endif()
file(INSTALL DESTINATION "${SG_PC_DESTINATION}" TYPE FILE FILES "${SG_PC_OUT}")
