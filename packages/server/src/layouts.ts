import { LAYOUT_NAMES, type Layout, namedLayout } from '@ids/engine';
import { ServerConfigError } from './errors.js';

/**
 * The layout `--layout` and `IDS_LAYOUT` name: a name of the engine's NAMED_LAYOUTS or an alias.
 * @throws ServerConfigError for any other name.
 */
export function layoutNamed(name: string): Layout {
  const entry = namedLayout(name);
  if (!entry) {
    throw new ServerConfigError(
      `layout: expected one of ${LAYOUT_NAMES.join(', ')}, received ${JSON.stringify(name)}`,
    );
  }
  return entry.layout;
}
