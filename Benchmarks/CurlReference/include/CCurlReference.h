/* The module header of CCurlReference: the C reference loop and process helpers for courier-bench. */
#include "courier_reference.h"
#include "courier_process.h"
