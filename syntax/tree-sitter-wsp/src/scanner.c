// External scanner of the WSP grammar: NEWLINE, INDENT and DEDENT from an indentation stack,
// the technique of tree-sitter-python. Inside brackets (a closing bracket is valid) no layout
// token is produced, so line breaks there are whitespace.
#include "tree_sitter/parser.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum TokenType { NEWLINE, INDENT, DEDENT, ERROR_SENTINEL, CLOSE_BRACKET, CLOSE_PAREN, CLOSE_BRACE };

#define MAX_DEPTH 1024

typedef struct {
  uint16_t indents[MAX_DEPTH];
  uint32_t len;
} Scanner;

static void skip(TSLexer *lexer) { lexer->advance(lexer, true); }

void *tree_sitter_wsp_external_scanner_create(void) {
  Scanner *s = calloc(1, sizeof(Scanner));
  s->indents[0] = 0;
  s->len = 1;
  return s;
}

void tree_sitter_wsp_external_scanner_destroy(void *payload) { free(payload); }

unsigned tree_sitter_wsp_external_scanner_serialize(void *payload, char *buffer) {
  Scanner *s = payload;
  unsigned size = 0;
  for (uint32_t i = 1; i < s->len && size + 2 <= TREE_SITTER_SERIALIZATION_BUFFER_SIZE; i++) {
    memcpy(buffer + size, &s->indents[i], 2);
    size += 2;
  }
  return size;
}

void tree_sitter_wsp_external_scanner_deserialize(void *payload, const char *buffer, unsigned length) {
  Scanner *s = payload;
  s->indents[0] = 0;
  s->len = 1;
  for (unsigned i = 0; i + 1 < length && s->len < MAX_DEPTH; i += 2) {
    memcpy(&s->indents[s->len++], buffer + i, 2);
  }
}

bool tree_sitter_wsp_external_scanner_scan(void *payload, TSLexer *lexer, const bool *valid) {
  Scanner *s = payload;
  bool error_recovery = valid[ERROR_SENTINEL];
  bool within_brackets = valid[CLOSE_BRACKET] || valid[CLOSE_PAREN] || valid[CLOSE_BRACE];

  lexer->mark_end(lexer);

  bool found_end_of_line = false;
  uint32_t indent = 0;
  int32_t first_comment_indent = -1;
  for (;;) {
    if (lexer->lookahead == '\n') {
      found_end_of_line = true;
      indent = 0;
      skip(lexer);
    } else if (lexer->lookahead == ' ') {
      indent++;
      skip(lexer);
    } else if (lexer->lookahead == '\r' || lexer->lookahead == '\f') {
      indent = 0;
      skip(lexer);
    } else if (lexer->lookahead == '\t') {
      indent = (indent / 8 + 1) * 8;
      skip(lexer);
    } else if (lexer->lookahead == '#') {
      // A comment line does not set the indentation; remember where the first one starts.
      if (first_comment_indent == -1) first_comment_indent = (int32_t)indent;
      while (lexer->lookahead && lexer->lookahead != '\n' && lexer->lookahead != '\r') skip(lexer);
      skip(lexer);
      indent = 0;
      found_end_of_line = true;
    } else if (lexer->lookahead == '\\') {
      skip(lexer);
      if (lexer->lookahead == '\r') skip(lexer);
      if (lexer->lookahead == '\n' || lexer->eof(lexer)) {
        skip(lexer);
      } else {
        return false;
      }
    } else if (lexer->eof(lexer)) {
      indent = 0;
      found_end_of_line = true;
      break;
    } else {
      break;
    }
  }

  if (found_end_of_line) {
    uint16_t current = s->indents[s->len - 1];
    if (valid[INDENT] && indent > current && !error_recovery && s->len < MAX_DEPTH) {
      s->indents[s->len++] = (uint16_t)indent;
      lexer->result_symbol = INDENT;
      return true;
    }
    if ((valid[DEDENT] || (!valid[NEWLINE] && !within_brackets)) && indent < current &&
        first_comment_indent < (int32_t)current && s->len > 1) {
      s->len--;
      lexer->result_symbol = DEDENT;
      return true;
    }
    if (valid[NEWLINE] && !error_recovery) {
      lexer->result_symbol = NEWLINE;
      return true;
    }
  }
  return false;
}
