/** `--queue URL` reaches the config loaders as this environment variable, where it wins over `queue:`. */
export const QUEUE_URL_ENV = 'RUNNER_QUEUE_URL';
