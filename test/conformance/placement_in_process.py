# Placement's own WSGI application in-process over its database, behind a
# keystoneauth-like adapter, as Nova's report client expects it: Nova's
# placement commands and its resource tracker talk to the Placement REST
# API, which this machine does not run. Prepended to the Python the tier runs
# with `python3 -c` (nova-on-placement.ts, release.ts with nova_rt.py); call
# in_process_report_client(conf_path) after eventlet's monkey patching
# (import nova.cmd), before Placement's engine exists.
import json as _json


def in_process_report_client(conf_path):
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
            return _json.loads(self.text)

        @property
        def ok(self):
            return self.status_code < 400

        def __bool__(self):
            return self.ok

    class Adapter(object):
        def _call(self, method, url, json_body=None, microversion=None, headers=None):
            h = {'X-Auth-Token': 'admin', 'Accept': 'application/json'}
            if headers:
                h.update(headers)
            if microversion is not None:
                h['OpenStack-API-Version'] = 'placement %s' % microversion
            req = webob.Request.blank(url, method=method, headers=h)
            if json_body is not None:
                req.content_type = 'application/json'
                req.body = _json.dumps(json_body).encode('utf-8')
            return Response(req.get_response(app))

        def get(self, url, microversion=None, **kw):
            return self._call('GET', url, microversion=microversion, headers=kw.get('headers'))

        def delete(self, url, microversion=None, **kw):
            return self._call('DELETE', url, microversion=microversion, headers=kw.get('headers'))

        def put(self, url, json=None, microversion=None, **kw):
            return self._call('PUT', url, json_body=json, microversion=microversion, headers=kw.get('headers'))

        def post(self, url, json=None, microversion=None, **kw):
            return self._call('POST', url, json_body=json, microversion=microversion, headers=kw.get('headers'))

    from nova.scheduler.client import report
    client = report.SchedulerReportClient(adapter=Adapter())
    report.report_client_singleton = lambda: client
    return client
