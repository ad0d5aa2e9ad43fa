/*
 * SPDX-License-Identifier: GPL-2.0
 *
 * An SSDT for the test VM (QEMU pc, -smp 2) that gives each CPU a _CST
 * with one state, C1 (HLT).  With a _CST, acpi_idle registers a cpuidle
 * driver, and its state 0 is POLL: poll_idle() runs in the guest.  QEMU's
 * own tables have no _CST, so without this the guest has no cpuidle driver.
 */
DefinitionBlock ("", "SSDT", 2, "KTEST", "POLLCST", 1)
{
    External (\_SB.CPUS.C000, DeviceObj)
    External (\_SB.CPUS.C001, DeviceObj)

    Name (\_SB.CPUS.CST1, Package () {
        1,
        Package () {
            ResourceTemplate () { Register (FFixedHW, 0, 0, 0) },
            1,      /* C1 */
            1,      /* latency, us */
            1000    /* power, mW */
        }
    })

    Scope (\_SB.CPUS.C000) { Method (_CST, 0) { Return (\_SB.CPUS.CST1) } }
    Scope (\_SB.CPUS.C001) { Method (_CST, 0) { Return (\_SB.CPUS.CST1) } }
}
