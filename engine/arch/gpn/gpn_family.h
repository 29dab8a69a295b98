/* The GPN and GPN+M rows of the family table (engine/arch/family.h). */
#ifndef GS_ENGINE_ARCH_GPN_FAMILY_H
#define GS_ENGINE_ARCH_GPN_FAMILY_H

#include "engine/arch/family.h"

extern const gs_family gs_family_gpn, gs_family_gpn_m;

#endif
