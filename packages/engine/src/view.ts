/** What a generator shows of itself in structured logs (`toJSON`) and to `util.inspect`. */
export interface GeneratorView {
  /** The layout's name, e.g. 'sonyflake' or 'twitter'. */
  readonly layout: string;
  /** The machine ID IDs are issued under now. */
  readonly machineId: number;
  /** Whether `close()` was called. */
  readonly closed: boolean;
}
