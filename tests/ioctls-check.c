// SPDX-License-Identifier: GPL-2.0
/*
 * Build-time check that ioctls.h lists every ioctl of the uapi header.
 * The Makefile writes build/uapi-ioctls.h from the header's
 * "#define DTFD_IOC_NAME _IO..." lines as UAPI_IOCTLS(X) X(NAME) ...;
 * a NAME without a row in DTFD_IOCTLS is an undeclared IOC_NAME here,
 * and the counts must match too.  Compiled with -fsyntax-only: no code.
 */
#include <linux/ioctl.h>

#include "ioctls.h"
#include "uapi-ioctls.h"

/* "IOC_NAME undeclared": add DTFD_IOC_NAME to DTFD_IOCTLS in ioctls.h */
#define IN_TABLE(name) \
	_Static_assert(IOC_##name >= 0, "DTFD_IOC_" #name " listed");
UAPI_IOCTLS(IN_TABLE)

#define UAPI(name)	UAPI_##name,
enum { UAPI_IOCTLS(UAPI) N_UAPI };
_Static_assert((int)N_UAPI == (int)IOC_N,
	       "tests/ioctls.h lists each ioctl of <linux/dtimerfd.h> once");
