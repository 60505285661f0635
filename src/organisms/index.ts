export { checkTorch, factoryDir, makeOrganism, PYTHON, readSpec } from './make.ts';
export { type OrganismSpec, organismSpecSchema } from './spec.ts';
export { defaultZooDir, markerRegExp, readZoo, type ZooEntry, zooSchema } from './zoo.ts';
