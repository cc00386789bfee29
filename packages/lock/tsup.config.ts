import { packageConfig } from '../../tsup.config.base';

export default packageConfig(['src/index.ts', 'src/redis.ts', 'src/etcd.ts', 'src/zookeeper.ts']);
