extern "C" void wsp_kernel_ffn_tile(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  uint16_t* const p_x = (uint16_t*)wsp_t[0]; const int64_t p_x_rs = wsp_s[0], p_x_cs = wsp_s[1];
  uint16_t* const p_w1 = (uint16_t*)wsp_t[1]; const int64_t p_w1_rs = wsp_s[2], p_w1_cs = wsp_s[3];
  uint16_t* const p_w2 = (uint16_t*)wsp_t[2]; const int64_t p_w2_rs = wsp_s[4], p_w2_cs = wsp_s[5];
  float* const p_res = (float*)wsp_t[3]; const int64_t p_res_rs = wsp_s[6], p_res_cs = wsp_s[7];
  float* const p_out = (float*)wsp_t[4]; const int64_t p_out_rs = wsp_s[8], p_out_cs = wsp_s[9];
  float v_x[8192]; wsp::load<64, 128, wsp::F16>(v_x, p_x, p_x_rs, p_x_cs);
  float v_w1[32768]; wsp::load<128, 256, wsp::F16>(v_w1, p_w1, p_w1_rs, p_w1_cs);
  // %0 = matmul
  float v0[16384]; wsp::matmul<float, 64, 256, 128>(v_x, v_w1, nullptr, v0);
  // %1 = silu
  float v1[16384];
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 256; ++j) { const float x = v0[i * 256 + j]; v1[i * 256 + j] = (float)(x / (1 + wsp::exp(-x))); }
  // %2 = cast
  float v2[16384]; for (int k = 0; k < 16384; ++k) v2[k] = wsp::F16::round((float)v1[k]);
  float v_w2[32768]; wsp::load<256, 128, wsp::F16>(v_w2, p_w2, p_w2_rs, p_w2_cs);
  // %3 = matmul
  float v3[8192]; wsp::matmul<float, 64, 128, 256>(v2, v_w2, nullptr, v3);
  float v_res[8192]; wsp::load<64, 128, wsp::Plain<float>>(v_res, p_res, p_res_rs, p_res_cs);
  // %4 = add
  float v4[8192];
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 128; ++j) { const float a = v_res[i * 128 + j]; const float b = v3[i * 128 + j]; v4[i * 128 + j] = (float)(a + b); }
  // %5 = store
  wsp::store<64, 128, wsp::Plain<float>>(p_out, p_out_rs, p_out_cs, v4);
}
