# Public names of skdc.protocol, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._analyst import Analyst as Analyst
from ._anchor import load_anchor as load_anchor
from ._anchor import make_anchor as make_anchor
from ._cli import register_commands as register_commands
from ._container import FORMAT_VERSION as FORMAT_VERSION
from ._container import UploadError as UploadError
from ._fingerprint import DEPLOYED_FIELDS as DEPLOYED_FIELDS
from ._fingerprint import deployment_commands as deployment_commands
from ._fingerprint import read_audit_fingerprint as read_audit_fingerprint
from ._fingerprint import settings_fingerprint as settings_fingerprint
from ._fingerprint import upload_settings as upload_settings
from ._map import AlignmentMap as AlignmentMap
from ._model import load_model as load_model
from ._model import save_model as save_model
from ._participant import Participant as Participant
from ._upload import save_simulated_uploads as save_simulated_uploads
from ._upload import save_upload as save_upload
from ._upload_set import UploadSet as UploadSet
from ._upload_set import load_uploads as load_uploads
