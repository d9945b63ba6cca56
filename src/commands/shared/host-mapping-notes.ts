// What a command that changes host mappings tells the operator afterwards.

/** nova-manage delete_host's docstring: the scheduler caches host-to-cell mappings. */
export const SCHEDULER_CACHE_NOTE =
  'note: nova-scheduler caches host-to-cell mappings; send it SIGHUP (or restart it) so that it forgets the changed mappings';
