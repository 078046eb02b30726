"""ts.context: what a handler's initialize and handle receive."""


class _Metrics:
    """Handlers call these; inferd's own /metrics counts requests and times."""

    def add_time(self, *args, **kwargs):
        pass

    def add_counter(self, *args, **kwargs):
        pass

    def add_size(self, *args, **kwargs):
        pass

    def add_percent(self, *args, **kwargs):
        pass

    def add_metric(self, *args, **kwargs):
        pass

    def add_metric_to_cache(self, *args, **kwargs):
        pass

    def get_metric(self, *args, **kwargs):
        return _Metric()


class _Metric:
    def add_or_update(self, *args, **kwargs):
        pass

    def update(self, *args, **kwargs):
        pass


class RequestProcessor:
    def __init__(self, headers=None):
        self._headers = dict(headers or {})
        self._status_code = 200
        self._reason = ""
        self._response_headers = {}

    def get_request_property(self, key):
        return self._headers.get(key)

    def get_request_properties(self):
        return dict(self._headers)

    def report_status(self, code, reason=None):
        self._status_code, self._reason = code, reason or ""

    def get_response_status_code(self):
        return self._status_code

    def get_response_status_phrase(self):
        return self._reason

    def add_response_property(self, key, value):
        self._response_headers[key] = value

    def get_response_headers(self):
        return self._response_headers

    def get_response_header(self, key):
        return self._response_headers.get(key)


class Context:
    """The model's context, as TorchServe hands it to a handler."""

    def __init__(self, model_name, model_dir, manifest, batch_size, gpu, server_version,
                 limit_max_image_pixels=True, metrics=None, model_yaml_config=None):
        self.model_name = model_name
        self.manifest = manifest
        self._system_properties = {
            "model_dir": model_dir,
            "gpu_id": gpu,
            "batch_size": batch_size,
            "server_name": "inferd",
            "server_version": server_version,
            "limit_max_image_pixels": limit_max_image_pixels,
        }
        self.request_ids = None
        self.request_processor = None
        self.metrics = metrics or _Metrics()
        if model_yaml_config is None:
            model_yaml_config = _read_model_yaml_config(model_dir, manifest)
        self.model_yaml_config = model_yaml_config
        self._content_types = {}

    @property
    def system_properties(self):
        return self._system_properties

    def reset(self, count, content_types):
        """Called by the worker before each batch."""
        self.request_ids = {i: str(_uuid4()) for i in range(count)}
        self.request_processor = [
            RequestProcessor({"Content-Type": ct} if ct else {}) for ct in content_types]
        self._content_types = {}

    def get_request_id(self, idx=0):
        return self.request_ids.get(idx) if self.request_ids else None

    def get_request_header(self, idx, key):
        return self.request_processor[idx].get_request_property(key)

    def get_all_request_header(self, idx):
        return self.request_processor[idx].get_request_properties()

    def set_response_content_type(self, idx, value):
        self._content_types[idx] = value

    def get_response_content_type(self, idx):
        return self._content_types.get(idx)

    def get_response_status(self, idx):
        p = self.request_processor[idx]
        return p.get_response_status_code(), p.get_response_status_phrase()

    def set_response_status(self, code=200, phrase="", idx=0):
        if self.request_processor:
            self.request_processor[idx].report_status(code, phrase)

    def set_all_response_status(self, code=200, phrase=""):
        for p in self.request_processor or []:
            p.report_status(code, phrase)

    def get_response_headers(self, idx):
        return self.request_processor[idx].get_response_headers()

    def set_response_header(self, idx, key, value):
        self.request_processor[idx].add_response_property(key, value)


def _uuid4():
    import uuid
    return uuid.uuid4()


def _read_model_yaml_config(model_dir, manifest):
    name = ((manifest or {}).get("model") or {}).get("configFile")
    if not name or not model_dir:
        return {}
    import os
    import yaml
    with open(os.path.join(model_dir, name)) as f:
        return yaml.safe_load(f) or {}
