import { packageConfig } from '../../tsup.config.base';

export default packageConfig(['src/index.ts', 'src/help.ts', 'src/bin.ts']);
