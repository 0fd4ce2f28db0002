"""A stream's filter (option ``profile.filter``): one boolean expression on the table's columns, or refused.

The filter goes into every statement that selects the stream's rows (the claim, peek, the backlog, stats),
in parentheses. Text that closes those parentheses, ends the statement or comments out its rest changes
what the statement does (``1=1) OR (1=1`` made Completed rows ready to claim), so the filter is read first,
in the table's SQL dialect, with sqlglot: its tokens for the shape (no ``;``, no comment, every parenthesis
its own), its parser for the rest (one expression that can be a condition, no parameter, no statement; a
subquery may read, never write or lock). sqlglot is no T-SQL checker and need not be: it only finds these
structures. The engine then resolves every name and type in the filter against the table, in a query that
reads no row (``kinds.adopted.Adopted.profile``).

The check is about shape, not about what a function does: the filter runs with the connector's login, like
any SQL its owner writes in the configuration.

sqlglot takes 0.2 to 1 s to import on a 2-core machine: callers import this module where a filter is set.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from .errors import ConfigError, invalid_option

OPTION = "profile.filter"
HINT = "give one boolean expression on the table's columns, e.g. Type = 'Sync'"
# sqlglot's dialect for each engine (the names ConnectionSpec.dialect and Dialect.name give).
GRAMMARS = {"sqlserver": "tsql", "postgres": "postgres", "sqlite": "sqlite"}
# What the top of the filter (parentheses aside) may be: a comparison, IN, LIKE, IS, EXISTS ..., AND, OR,
# NOT, TRUE or FALSE; or a column or function call, whose type the engine judges (a boolean column on
# PostgreSQL). Not a literal, arithmetic or a subquery.
CONDITIONS = (exp.Predicate, exp.Connector, exp.Not, exp.Boolean, exp.Escape, exp.Column, exp.Func)
# What no part of it may be: a data-modifying CTE, SELECT ... INTO, FOR UPDATE.
WRITES = (exp.DML, exp.DDL, exp.Into, exp.Lock)
# Besides the grammar's statement keywords (DELETE, EXEC, ...), which start a statement, never a condition.
QUERIES = {TokenType.SELECT, TokenType.WITH}


def refused(text: str, why: str) -> ConfigError:
    """The one line that refuses ``text`` as the filter, saying ``why``."""
    return invalid_option(OPTION, text, f"{why}; {HINT}")


def check_filter(text: str, engine: str) -> str:
    """``text`` stripped when it is one boolean expression in ``engine``'s SQL; else a ConfigError saying in
    one line what is wrong."""
    condition = text.strip()
    if not condition:
        raise refused(text, "it is empty (leave the option unset to take every row)")
    grammar = Dialect.get_or_raise(GRAMMARS[engine])
    try:
        tokens = grammar.tokenize(condition)
    except TokenError as error:
        raise refused(text, f"it does not read as SQL ({error.__cause__ or error})") from None
    if any(token.token_type == TokenType.SEMICOLON for token in tokens):
        raise refused(text, "it holds a ';' (one expression, no statements)")
    # A command (EXEC on PostgreSQL, SHOW) swallows the rest of the text whole, in a token of no place.
    if tokens and tokens[0].token_type in grammar.tokenizer_class.COMMANDS:
        raise refused(text, _statement(tokens))
    _check_shape(text, condition, tokens)
    try:
        (tree,) = grammar.parser().parse_into(exp.Condition, tokens, condition)
    except ParseError as error:
        raise refused(text, _unreadable(grammar, tokens, condition, error)) from None
    assert tree is not None, "the text has tokens: a filter of comments alone was refused above"
    _check_tree(text, tree)
    return condition


def _check_shape(text: str, condition: str, tokens: list[Token]) -> None:
    """No comment, every parenthesis closed after it opened: with no ``;``, nothing in the filter reaches
    past the parentheses a statement puts around it."""
    covered = [False] * len(condition)
    for token in tokens:
        covered[token.start : token.end + 1] = [True] * (token.end + 1 - token.start)
    # The tokenizer skips blanks and comments only: any other text it skipped is a comment.
    if any(not seen and not char.isspace() for seen, char in zip(covered, condition)):
        raise refused(text, "it holds a comment (-- or /* */)")
    depth = 0
    for token in tokens:
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        if depth < 0:
            raise refused(text, "it closes a parenthesis it did not open")
    if depth:
        raise refused(text, "it leaves a parenthesis open")


def _check_tree(text: str, tree: exp.Expr) -> None:
    top = tree.unnest()
    if not isinstance(top, CONDITIONS):
        raise refused(text, f"it is a value ({top.sql()}), not a condition")
    parameter = tree.find(exp.Placeholder, exp.Parameter)
    if parameter is not None:
        raise refused(text, f"it holds a parameter or variable ({parameter.sql()}): write the value itself")
    writes = tree.find(*WRITES)
    if writes is not None:
        raise refused(text, f"a subquery in it does more than read ({type(writes).__name__.upper()})")


def _statement(tokens: list[Token]) -> str:
    return f"it is a statement ({tokens[0].text.upper()} ...), not a condition"


def _unreadable(grammar: Dialect, tokens: list[Token], condition: str, error: ParseError) -> str:
    """Why the parser found no single expression: the text starts as a statement does (SELECT, DELETE,
    EXEC ...), or where its reading stopped."""
    if tokens[0].token_type in QUERIES or tokens[0].token_type in grammar.parser_class.STATEMENT_PARSERS:
        return _statement(tokens)
    where = error.errors[0].get("highlight") if error.errors else None
    return f"it does not read as one expression from {where or condition!r} on"
