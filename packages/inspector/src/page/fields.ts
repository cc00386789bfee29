// Where each field of a layout sits in the 64 bits, highest first: the one shape both the bit
// strips of the inspector and the bars of the comparison are drawn from.
import type { Layout } from '@ids/engine';

/** What a run of bits holds; the page colours by kind and always writes the name too. */
export type FieldKind = 'sign' | 'unused' | 'time' | 'sequence' | 'machine';

/** A run of adjacent bits of one field (or of one part of the machine field). */
export interface Field {
  /** Its colour and its role. */
  readonly kind: FieldKind;
  /** What the page writes on it: "time", "sequence", "machine", or a machine part's name. */
  readonly name: string;
  /** How many bits it spans. */
  readonly bits: number;
  /** The index of its lowest bit (0 is the least significant). */
  readonly low: number;
}

/**
 * The fields of a layout from bit 63 down to bit 0. Bit 63 is the sign (always 0 in an ID);
 * bits the layout leaves between the sign and the time field are "unused" (always 0 too).
 */
export function fieldsOf(layout: Layout): Field[] {
  const low: Array<Omit<Field, 'low'>> = [];
  const machine: Array<Omit<Field, 'low'>> = layout.machineParts
    ? layout.machineParts.map((part) => ({ kind: 'machine', name: part.name, bits: part.bits }))
    : [{ kind: 'machine', name: 'machine', bits: layout.machineBits }];
  const sequence = { kind: 'sequence', name: 'sequence', bits: layout.sequenceBits } as const;
  if (layout.fieldOrder === 'machine-sequence') low.push(...machine, sequence);
  else low.push(sequence, ...machine);
  const unused = 63 - layout.timeBits - layout.sequenceBits - layout.machineBits;
  const all: Array<Omit<Field, 'low'>> = [
    { kind: 'sign', name: 'sign', bits: 1 },
    { kind: 'unused', name: 'unused', bits: unused },
    { kind: 'time', name: 'time', bits: layout.timeBits },
    ...low,
  ];
  let top = 64;
  const fields: Field[] = [];
  for (const field of all) {
    if (field.bits === 0) continue;
    top -= field.bits;
    fields.push({ ...field, low: top });
  }
  return fields;
}

/** The value of a field in an ID. */
export function fieldValue(id: bigint, field: Field): bigint {
  return (id >> BigInt(field.low)) & ((1n << BigInt(field.bits)) - 1n);
}

/** The 64 bits of an ID as "0" and "1", bit 63 first. */
export function bitString(id: bigint): string {
  return BigInt.asUintN(64, id).toString(2).padStart(64, '0');
}
