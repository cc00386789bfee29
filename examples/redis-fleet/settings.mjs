/**
 * Sonyflake settings with a machine field of `bits` bits. Sonyflake gives the time field what
 * the sequence and machine fields leave of 63 bits, and a field much over 39 bits of 10 ms
 * units would outlast what a JS Date can hold; the bits taken from the machine field go to the
 * sequence instead (more IDs per 10 ms, the same lifetime).
 * @param {number} bits
 */
export function settingsFor(bits) {
  return { bitsMachineId: bits, bitsSequence: 8 + (16 - bits) };
}
