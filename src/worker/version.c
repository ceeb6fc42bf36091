/* version.c: sys_version, the library's version (the header's ANTHEAP_VERSION_STRING at build
 * time), so a program can tell which libantheap it runs with. */
#include "antheap.h"

const char *sys_version(void) { return ANTHEAP_VERSION_STRING; }
