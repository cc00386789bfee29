import type { Layout } from '@ids/engine';
import { DISCORD_LAYOUT, TWITTER_LAYOUT } from '@ids/snowflake';
import { SONYFLAKE_LAYOUT, SONYFLAKE_V2_LAYOUT } from '@ids/sonyflake';
import { ServerConfigError } from './errors.js';

/** The layouts the server can issue, by the name `--layout` and `IDS_LAYOUT` take. */
export const SERVER_LAYOUTS: Readonly<Record<string, Layout>> = Object.freeze({
  sonyflake: SONYFLAKE_LAYOUT,
  'sonyflake-v2': SONYFLAKE_V2_LAYOUT,
  twitter: TWITTER_LAYOUT,
  snowflake: TWITTER_LAYOUT,
  discord: DISCORD_LAYOUT,
});

/** The layout of a name. @throws ServerConfigError for an unknown name. */
export function layoutNamed(name: string): Layout {
  if (!Object.hasOwn(SERVER_LAYOUTS, name)) {
    throw new ServerConfigError(
      `layout: expected one of ${Object.keys(SERVER_LAYOUTS).join(', ')}, received ${JSON.stringify(name)}`,
    );
  }
  return SERVER_LAYOUTS[name] as Layout;
}
