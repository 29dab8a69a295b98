/* The architecture ids: one per row of the family table
 * (engine/arch/families.c). Only engine/arch/ tests them (the rule
 * tests/cli/arch_boundary.sh checks); everything else asks the family row. */
#ifndef GS_ENGINE_ARCH_ARCH_H
#define GS_ENGINE_ARCH_ARCH_H

/* A family added in its own folder names no value here: its header declares
 * its id as GS_ARCH_OWN + n, the next n free (engine/arch/mamba2/mamba2.h),
 * and gs_family_of() finds it by the row. */
typedef enum { GS_ARCH_GPN = 0, GS_ARCH_GPN_M = 1, GS_ARCH_ELMAN = 2, GS_ARCH_TPP = 3, GS_ARCH_GDN = 4, GS_ARCH_RT = 5,
               GS_ARCH_LDRU = 6, GS_ARCH_OWN = 7 } gs_arch;

#endif
