/* The architecture ids: one per row of the family table
 * (engine/arch/families.c). Only engine/arch/ tests them (the rule
 * tests/cli/arch_boundary.sh checks); everything else asks the family row. */
#ifndef GS_ENGINE_ARCH_ARCH_H
#define GS_ENGINE_ARCH_ARCH_H

/* A family added in its own folder names no value here: its header declares
 * its id as GS_ARCH_OWN + n, the next n free (engine/arch/mamba2/mamba2.h),
 * and gs_family_of() finds it by the row. */
typedef enum { GPN_ARCH_GPN = 0, GPN_ARCH_GPN_M = 1, GPN_ARCH_ELMAN = 2, GPN_ARCH_TPP = 3, GPN_ARCH_GDN = 4, GPN_ARCH_RT = 5,
               GPN_ARCH_LDRU = 6, GS_ARCH_OWN = 7 } gpn_arch;

#endif
