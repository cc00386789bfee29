import { packageConfig } from '../../tsup.config.base';

export default packageConfig(['src/index.ts', 'src/internal.ts']);
