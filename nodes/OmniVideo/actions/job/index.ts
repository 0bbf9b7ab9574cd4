export * as get from './get.operation';
