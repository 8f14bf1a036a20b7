/** The answers Wagtail API v2 gives as `{"message": ...}`: 400 for a query it refuses, 404 for nothing found. */
export class ApiRefusal extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

/** A query Wagtail refuses (its `BadRequestError`): 400. */
export class BadRequest extends ApiRefusal {
  constructor(message: string) {
    super(400, message);
  }
}

/** Nothing matches (Django's `Http404`): 404. */
export class NotFound extends ApiRefusal {
  constructor(message: string) {
    super(404, message);
  }
}
