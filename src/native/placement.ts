/**
 * Whether a search of an index on the GPU can run there: the decision alone, from numbers the
 * addon reports, so it is tested without a GPU. An index whose rows need more device memory
 * than is free (its own holdings count as free: they are reused) or than the configured cap
 * is searched on the CPU instead, and the reason says which and by how much.
 */

export interface DeviceMemoryState {
  /** Bytes the index needs on the device for its rows as they are now (mirror and workspace). */
  requiredBytes: number;
  /** Bytes the index holds on the device now. */
  heldBytes: number;
  /** Free bytes on the device now. */
  freeBytes: number;
  /** The most one index may hold (CHRONOQL_DEVICE_MEMORY_MB); none when undefined. */
  capBytes?: number;
}

export type DevicePlacement = { onDevice: true } | { onDevice: false; reason: string };

const mebibytes = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export function placeSearch(state: DeviceMemoryState): DevicePlacement {
  const { requiredBytes, heldBytes, freeBytes, capBytes } = state;
  if (capBytes !== undefined && requiredBytes > capBytes) {
    return {
      onDevice: false,
      reason: `the index needs ${mebibytes(requiredBytes)} of GPU memory, more than the ${mebibytes(capBytes)} CHRONOQL_DEVICE_MEMORY_MB allows it`,
    };
  }
  const available = freeBytes + heldBytes;
  if (requiredBytes > available) {
    return {
      onDevice: false,
      reason: `the index needs ${mebibytes(requiredBytes)} of GPU memory and only ${mebibytes(available)} is free for it`,
    };
  }
  return { onDevice: true };
}
