extern "C" void wsp_kernel_attn_long__32x64_f16__512x64_f16__512x64_f16__32x64_f32(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  uint16_t* const p_q = (uint16_t*)wsp_t[0]; const int64_t p_q_rs = wsp_s[0], p_q_cs = wsp_s[1];
  uint16_t* const p_k = (uint16_t*)wsp_t[1]; const int64_t p_k_rs = wsp_s[2], p_k_cs = wsp_s[3];
  uint16_t* const p_v = (uint16_t*)wsp_t[2]; const int64_t p_v_rs = wsp_s[4], p_v_cs = wsp_s[5];
  float* const p_o = (float*)wsp_t[3]; const int64_t p_o_rs = wsp_s[6], p_o_cs = wsp_s[7];
  float v0[2048];
  float v1[32];
  float v2[32];
  float v3[32];
  float v4[2048];
  float v5[32];
  float v6[2048];
  float v7[32];
  float v8[8192];
  float v9[8192];
  float v10[4096];
  float v11[4096];
  float v12[32];
  float v13[32];
  float v14[4096];
  float v15[4096];
  float v16[32];
  float v17[32];
  float v18[32];
  float v19[32];
  float v20[32];
  float v21[8192];
  float v22[2048];
  float v23[4096];
  float v24[2048];
  float v25[2048];
  float v26[2048];
  // %0 = load
  wsp::load<32, 64, wsp::F16>(v0, p_q, p_q_rs, p_q_cs);
  // %1 = alloc
  for (int k = 0; k < 32; ++k) v1[k] = (float)0;
  // %2 = sub
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 1; ++j) { const float a = v1[i * 1 + 0]; const float b = 1e30; v2[i * 1 + j] = (float)(a - b); }
  // %3 = alloc
  for (int k = 0; k < 32; ++k) v3[k] = (float)0;
  // %4 = alloc
  for (int k = 0; k < 2048; ++k) v4[k] = (float)0;
  for (int k = 0; k < 32; ++k) v5[k] = v3[k];
  for (int k = 0; k < 2048; ++k) v6[k] = v4[k];
  for (int k = 0; k < 32; ++k) v7[k] = v2[k];
  for (int64_t l_j = 0; l_j < 4; ++l_j) {
  // %8 = load
  wsp::load<128, 64, wsp::F16>(v8, p_k + ((int64_t)0 + (int64_t)128 * l_j) * p_k_rs + ((int64_t)0) * p_k_cs, p_k_rs, p_k_cs);
  // %9 = transpose
  for (int i = 0; i < 128; ++i) for (int j = 0; j < 64; ++j) v9[j * 128 + i] = v8[i * 64 + j];
  // %10 = matmul
  wsp::matmul<float, 32, 128, 64>(v0, v9, nullptr, v10);
  // %11 = mul
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 128; ++j) { const float a = v10[i * 128 + j]; const float b = 0.125; v11[i * 128 + j] = (float)(a * b); }
  // %12 = rowmax
  for (int i = 0; i < 32; ++i) v12[i] = wsp::reduce_row<128>(v11 + i * 128, wsp::lowest<float>(), [](const float acc, const float x) { return (float)((x > acc ? x : acc)); });
  // %13 = maximum
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 1; ++j) { const float a = v7[i * 1 + 0]; const float b = v12[i * 1 + 0]; v13[i * 1 + j] = (float)((a > b ? a : b)); }
  // %14 = sub
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 128; ++j) { const float a = v11[i * 128 + j]; const float b = v13[i * 1 + 0]; v14[i * 128 + j] = (float)(a - b); }
  // %15 = exp
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 128; ++j) { const float x = v14[i * 128 + j]; v15[i * 128 + j] = (float)(wsp::exp(x)); }
  // %16 = sub
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 1; ++j) { const float a = v7[i * 1 + 0]; const float b = v13[i * 1 + 0]; v16[i * 1 + j] = (float)(a - b); }
  // %17 = exp
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 1; ++j) { const float x = v16[i * 1 + 0]; v17[i * 1 + j] = (float)(wsp::exp(x)); }
  // %18 = mul
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 1; ++j) { const float a = v5[i * 1 + 0]; const float b = v17[i * 1 + 0]; v18[i * 1 + j] = (float)(a * b); }
  // %19 = rowsum
  for (int i = 0; i < 32; ++i) v19[i] = wsp::reduce_row<128>(v15 + i * 128, (float)0, [](const float acc, const float x) { return (float)(acc + x); });
  // %20 = add
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 1; ++j) { const float a = v18[i * 1 + 0]; const float b = v19[i * 1 + 0]; v20[i * 1 + j] = (float)(a + b); }
  // %21 = load
  wsp::load<128, 64, wsp::F16>(v21, p_v + ((int64_t)0 + (int64_t)128 * l_j) * p_v_rs + ((int64_t)0) * p_v_cs, p_v_rs, p_v_cs);
  // %22 = mul
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 64; ++j) { const float a = v6[i * 64 + j]; const float b = v17[i * 1 + 0]; v22[i * 64 + j] = (float)(a * b); }
  // %23 = cast
  for (int k = 0; k < 4096; ++k) v23[k] = wsp::F16::round((float)v15[k]);
  // %24 = matmul
  wsp::matmul<float, 32, 64, 128>(v23, v21, nullptr, v24);
  // %25 = add
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 64; ++j) { const float a = v22[i * 64 + j]; const float b = v24[i * 64 + j]; v25[i * 64 + j] = (float)(a + b); }
  if (l_j + 1 < 4) {
  for (int k = 0; k < 32; ++k) v5[k] = v20[k];
  for (int k = 0; k < 2048; ++k) v6[k] = v25[k];
  for (int k = 0; k < 32; ++k) v7[k] = v13[k];
  }
  }
  // %26 = div
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 64; ++j) { const float a = v25[i * 64 + j]; const float b = v20[i * 1 + 0]; v26[i * 64 + j] = (float)(a / b); }
  // %27 = store
  wsp::store<32, 64, wsp::Plain<float>>(p_o, p_o_rs, p_o_cs, v26);
}
