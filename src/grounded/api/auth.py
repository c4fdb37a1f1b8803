"""`/v1/auth/*`: log in, log out, who am I, change password, register."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from grounded.api import credentials
from grounded.api.deps import DatabaseDep, PrincipalDep
from grounded.api.schemas_auth import (
    Accepted,
    LoginRequest,
    MePublic,
    PasswordChange,
    RegisterRequest,
    SessionPublic,
    UserPublic,
)
from grounded.auth import csrf
from grounded.auth.login import Accounts
from grounded.auth.sessions import Sessions
from grounded.db import Database
from grounded.errors import Unauthenticated

router = APIRouter(prefix="/v1/auth", tags=["auth"])


def _accounts(request: Request, database: Database) -> Accounts:
    return Accounts(database, credentials.settings_of(request).auth, credentials.clock_of(request))


def _login_origin(request: Request) -> None:
    # Login CSRF: a browser always sends Origin on a cross-site POST; scripts
    # (curl, the SDK) send none and are allowed. `null` is refused.
    csrf.check_origin(
        request.headers.get("origin"), credentials.allowed_origins(request), required=False
    )


@router.post("/login", response_model=SessionPublic, summary="Log in; sets the session cookie")
def login(
    body: LoginRequest, request: Request, response: Response, database: DatabaseDep
) -> SessionPublic:
    _login_origin(request)
    replaces = None
    old = credentials.session_value(request)
    if old is not None:
        # Rotation: a session presented at login is ended, whatever happens next.
        try:
            replaces = (
                Sessions(
                    database, credentials.settings_of(request).auth, credentials.clock_of(request)
                )
                .authenticate(old)
                .credential_id
            )
        except Unauthenticated:
            replaces = None
    done = _accounts(request, database).login(
        body.tenant,
        body.email,
        body.password,
        client=credentials.client_address(request),
        replaces=replaces,
    )
    credentials.set_session_cookie(request, response, done.session)
    return SessionPublic(
        user=UserPublic.of(done.user),
        csrf_token=done.session.csrf_token,
        expires_at=done.session.expires_at,
    )


@router.post(
    "/logout",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Log out: ends every session of the user",
)
def logout(
    principal: PrincipalDep, request: Request, response: Response, database: DatabaseDep
) -> None:
    _accounts(request, database).logout(principal)
    credentials.clear_session_cookie(request, response)


@router.get("/me", response_model=MePublic, summary="The verified principal of this request")
def me(principal: PrincipalDep, request: Request) -> MePublic:
    value = credentials.session_value(request) if principal.via == "session" else None
    return MePublic(
        kind=principal.kind,
        id=principal.id,
        tenant_id=principal.tenant_id,
        roles=sorted(principal.roles),
        groups=sorted(principal.groups),
        permissions=sorted(principal.permissions),
        via=principal.via,
        csrf_token=csrf.token_for(value) if value is not None else None,
    )


@router.post(
    "/password",
    response_model=SessionPublic,
    summary="Change password: ends all sessions and tokens, starts a new session",
)
def change_password(
    body: PasswordChange,
    principal: PrincipalDep,
    request: Request,
    response: Response,
    database: DatabaseDep,
) -> SessionPublic:
    done = _accounts(request, database).change_password(
        principal, body.current_password, body.new_password
    )
    credentials.set_session_cookie(request, response, done.session)
    return SessionPublic(
        user=UserPublic.of(done.user),
        csrf_token=done.session.csrf_token,
        expires_at=done.session.expires_at,
    )


@router.post(
    "/register",
    response_model=Accepted,
    status_code=status.HTTP_202_ACCEPTED,
    summary="Public sign-up (role user), when enabled by auth.registration_enabled",
)
def register(body: RegisterRequest, request: Request, database: DatabaseDep) -> Accepted:
    _login_origin(request)
    _accounts(request, database).register(
        body.tenant,
        body.email,
        body.password,
        body.display_name,
        client=credentials.client_address(request),
    )
    return Accepted()
