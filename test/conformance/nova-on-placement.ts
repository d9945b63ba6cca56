// The real nova-manage with its Placement client on an in-process
// Placement 8.0.0. Nova's placement commands talk to the Placement REST API,
// which this machine does not run; so the report client's keystoneauth
// adapter is swapped for one that calls Placement's own WSGI application
// (placement.deploy.loadapp) in-process over the same placement database.
// Everything else is the real thing: nova-manage's argument parsing, its
// cell and instance queries, the placement handlers and their SQL. Used by
// the placement audit and heal_allocations conformance tests.
import { spawn } from 'node:child_process';
import { realNovaVersions, type RealDeployment, type ToolResult } from './real-nova.js';

/**
 * nova-manage with its placement client on an in-process Placement. Eventlet
 * monkey patching (nova.cmd) must come before placement's engine exists, or
 * its locks are the unpatched ones.
 */
const NOVA_ON_PLACEMENT_MAIN = String.raw`
import sys, json
import nova.cmd
sys.argv[0] = 'nova-manage'
conf_path = sys.argv[sys.argv.index('--config-file') + 1]
from oslo_config import cfg
from placement import conf as placement_conf, db_api as placement_db, deploy
import webob
pconf = cfg.ConfigOpts()
placement_conf.register_opts(pconf)
pconf([], project='placement', default_config_files=[conf_path])
pconf.set_override('auth_strategy', 'noauth2', group='api')
placement_db.configure(pconf)
app = deploy.loadapp(pconf)

class Response(object):
    def __init__(self, r):
        self.status_code = r.status_code
        self.text = r.text
        self.headers = r.headers
        self.content = r.body
    def json(self):
        return json.loads(self.text)
    @property
    def ok(self):
        return self.status_code < 400
    def __bool__(self):
        return self.ok

class Adapter(object):
    def _call(self, method, url, json_body=None, microversion=None):
        headers = {'X-Auth-Token': 'admin', 'Accept': 'application/json'}
        if microversion is not None:
            headers['OpenStack-API-Version'] = 'placement %s' % microversion
        req = webob.Request.blank(url, method=method, headers=headers)
        if json_body is not None:
            req.content_type = 'application/json'
            req.body = json.dumps(json_body).encode('utf-8')
        return Response(req.get_response(app))
    def get(self, url, microversion=None, **kw):
        return self._call('GET', url, microversion=microversion)
    def delete(self, url, microversion=None, **kw):
        return self._call('DELETE', url, microversion=microversion)
    def put(self, url, json=None, microversion=None, **kw):
        return self._call('PUT', url, json_body=json, microversion=microversion)
    def post(self, url, json=None, microversion=None, **kw):
        return self._call('POST', url, json_body=json, microversion=microversion)

from nova.scheduler.client import report
client = report.SchedulerReportClient(adapter=Adapter())
report.report_client_singleton = lambda: client
from nova.cmd.manage import main
sys.exit(main())
`;

/** `nova-manage --config-file <the deployment's nova.conf> ...args` with the in-process Placement. */
export function runNovaManageOnPlacement(d: RealDeployment, args: readonly string[]): Promise<ToolResult> {
  const python = realNovaVersions()?.python ?? '/usr/bin/python3';
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-c', NOVA_ON_PLACEMENT_MAIN, '--config-file', d.confPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code: code ?? 255 });
    });
  });
}
