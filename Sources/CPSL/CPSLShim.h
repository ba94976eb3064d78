// libpsl: the Public Suffix List, as curl itself reads it (Debian: libpsl-dev).
#include <libpsl.h>
