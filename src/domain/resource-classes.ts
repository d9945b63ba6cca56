// Placement's resource classes. os_resource_classes.STANDARDS (1.1.0, as
// Placement 8.0.0 ships it): a standard class's id is its index, so the order
// is part of the schema and must never change. Placement inserts them when
// its API starts, not at `placement-manage db sync`, so a freshly synced
// database may have none. Used by the placement migration and the sandbox.
export const STANDARD_RESOURCE_CLASSES: readonly string[] = Object.freeze([
  'VCPU',
  'MEMORY_MB',
  'DISK_GB',
  'PCI_DEVICE',
  'SRIOV_NET_VF',
  'NUMA_SOCKET',
  'NUMA_CORE',
  'NUMA_THREAD',
  'NUMA_MEMORY_MB',
  'IPV4_ADDRESS',
  'VGPU',
  'VGPU_DISPLAY_HEAD',
  'NET_BW_EGR_KILOBIT_PER_SEC',
  'NET_BW_IGR_KILOBIT_PER_SEC',
  'PCPU',
  'MEM_ENCRYPTION_CONTEXT',
  'FPGA',
  'PGPU',
  'NET_PACKET_RATE_KILOPACKET_PER_SEC',
  'NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC',
  'NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC',
]);

/** Custom resource classes are numbered from here (ResourceClass.MIN_CUSTOM_RESOURCE_CLASS_ID). */
export const FIRST_CUSTOM_RESOURCE_CLASS_ID = 10000;
